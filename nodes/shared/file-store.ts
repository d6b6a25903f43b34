import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../src/errors';
import { FileSessionStore } from '../../src/session/file-store';

/** Where the sample workflow keeps its sessions (n8n 2.x allows files under ~/.n8n-files by default). */
export const DEFAULT_RECORD_FOLDER = '/home/node/.n8n-files/singpass';

export const folderInput: INodeProperties = {
  displayName: 'Folder',
  name: 'folder',
  type: 'string',
  default: DEFAULT_RECORD_FOLDER,
  required: true,
  description: 'Folder holding the session records and the PDFs being signed, one file each named after the signRef. Every Session Record node of a workflow must name the same folder. It must be allowed by N8N_RESTRICT_FILE_ACCESS_TO (n8n 2.x allows ~/.n8n-files by default).',
};

/**
 * The file store of the node's Folder parameter, after n8n's own file-access check (the one Read/Write Files uses:
 * N8N_RESTRICT_FILE_ACCESS_TO, N8N_BLOCK_FILE_ACCESS_TO_N8N_FILES, N8N_BLOCK_FILE_PATTERNS). The folder is created
 * when missing. n8n versions without these helpers (before 1.x) get no check.
 */
export async function recordStore(ctx: IExecuteFunctions, i: number): Promise<FileSessionStore> {
  const folder = String(ctx.getNodeParameter('folder', i, DEFAULT_RECORD_FOLDER) ?? '').trim();
  if (!folder || !path.isAbsolute(folder)) {
    throw new SingpassFlowsError('INVALID_INPUT', `Folder: give an absolute folder path (e.g. ${DEFAULT_RECORD_FOLDER})`, { field: 'Folder' });
  }
  const h = ctx.helpers as Partial<Pick<IExecuteFunctions['helpers'], 'resolvePath' | 'isFilePathBlocked'>>;
  if (typeof h.resolvePath === 'function' && typeof h.isFilePathBlocked === 'function') {
    const blocked = (p: string) => h.isFilePathBlocked!(p as Parameters<NonNullable<typeof h.isFilePathBlocked>>[0]);
    const refuse = () => new SingpassFlowsError('INVALID_INPUT', `Folder: n8n does not allow access to ${folder} (N8N_RESTRICT_FILE_ACCESS_TO, N8N_BLOCK_FILE_ACCESS_TO_N8N_FILES); use a folder under an allowed path, e.g. ${DEFAULT_RECORD_FOLDER}`, { field: 'Folder' });
    // the folder as written first (nothing is created outside the allowed paths), then as resolved (symlinks)
    if (blocked(path.resolve(folder))) throw refuse();
    await fs.mkdir(folder, { recursive: true, mode: 0o700 });
    if (blocked(await h.resolvePath(path.join(folder, 'x.json')))) throw refuse();
  }
  return new FileSessionStore(folder);
}
