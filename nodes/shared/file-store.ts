import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../src/errors';
import { FileSessionStore } from '../../src/session';

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

/** The checked store per folder, for the trigger (its webhook answers within the service's 2 s: no checks per delivery). */
const readStores = new Map<string, Promise<FileSessionStore>>();

/**
 * The file store the Singpass Sign Trigger reads session records from (it never writes). n8n gives a webhook no
 * file-system helpers, so the folder is checked here against N8N_RESTRICT_FILE_ACCESS_TO the way n8n checks it (the
 * resolved folder inside one of the allowed paths), once per folder and process. A folder that does not exist yet is
 * fine (no record yet: every delivery is "unknown session" until the first Save Session Record creates it).
 */
export function readOnlyRecordStore(folder: string): Promise<FileSessionStore> {
  const key = folder.trim();
  let store = readStores.get(key);
  if (!store) {
    store = checkedFolder(key).then((dir) => new FileSessionStore(dir));
    store.catch(() => readStores.delete(key));
    readStores.set(key, store);
  }
  return store;
}

async function checkedFolder(folder: string): Promise<string> {
  if (!folder || !path.isAbsolute(folder)) {
    throw new SingpassFlowsError('INVALID_INPUT', `Session Record Folder: give an absolute folder path (e.g. ${DEFAULT_RECORD_FOLDER}), the Folder of your Session Record nodes`, { field: 'Session Record Folder' });
  }
  const resolved = await fs.realpath(folder).catch(() => path.resolve(folder));
  const allowed = (process.env.N8N_RESTRICT_FILE_ACCESS_TO ?? '').split(';').map((p) => p.trim()).filter(Boolean)
    .map((p) => path.resolve(p.startsWith('~') ? p.replace('~', os.homedir()) : p));
  const inside = (base: string) => resolved === base || resolved.startsWith(base.endsWith(path.sep) ? base : base + path.sep);
  if (allowed.length && !(await Promise.all(allowed.map((a) => fs.realpath(a).catch(() => a)))).some(inside)) {
    throw new SingpassFlowsError('INVALID_INPUT', `Session Record Folder: n8n does not allow access to ${folder} (N8N_RESTRICT_FILE_ACCESS_TO); use the Folder of your Session Record nodes, e.g. ${DEFAULT_RECORD_FOLDER}`, { field: 'Session Record Folder' });
  }
  return resolved;
}
