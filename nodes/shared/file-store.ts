import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { SingpassFlowsError } from '../../src/errors';
import { createSessionStore, FileSessionStore, type DurableSessionStore, type StorePolicy } from '../../src/session';

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

/** How a message names the folder setting: the node's Folder parameter (version 1) or the store credential's field. */
export interface FolderLabel {
  /** e.g. `Folder`, or `Credential "Singpass Session Store", field "Folder"`. */
  where: string;
  field: string;
}
const FOLDER_PARAMETER: FolderLabel = { where: 'Folder', field: 'Folder' };

/** The file store of a version-1 node's Folder parameter, checked as {@link checkedFolderStore} does. */
export function recordStore(ctx: IExecuteFunctions, i: number, policy: Partial<StorePolicy> = {}): Promise<DurableSessionStore> {
  return checkedFolderStore(ctx, String(ctx.getNodeParameter('folder', i, DEFAULT_RECORD_FOLDER) ?? ''), FOLDER_PARAMETER, policy);
}

/**
 * The core's folder store of `folder` (with `policy`), after n8n's own file-access check (the one Read/Write Files uses:
 * N8N_RESTRICT_FILE_ACCESS_TO, N8N_BLOCK_FILE_ACCESS_TO_N8N_FILES, N8N_BLOCK_FILE_PATTERNS). The folder is created
 * when missing. n8n versions without these helpers (before 1.x) get no check.
 */
export async function checkedFolderStore(ctx: IExecuteFunctions, folderSetting: string, label: FolderLabel, policy: Partial<StorePolicy> = {}): Promise<DurableSessionStore> {
  const folder = folderSetting.trim();
  if (!folder || !path.isAbsolute(folder)) {
    throw new SingpassFlowsError('INVALID_INPUT', `${label.where}: give an absolute folder path (e.g. ${DEFAULT_RECORD_FOLDER})`, { field: label.field });
  }
  const h = ctx.helpers as Partial<Pick<IExecuteFunctions['helpers'], 'resolvePath' | 'isFilePathBlocked'>>;
  if (typeof h.resolvePath === 'function' && typeof h.isFilePathBlocked === 'function') {
    const blocked = (p: string) => h.isFilePathBlocked!(p as Parameters<NonNullable<typeof h.isFilePathBlocked>>[0]);
    const refuse = () => new SingpassFlowsError('INVALID_INPUT', `${label.where}: n8n does not allow access to ${folder} (N8N_RESTRICT_FILE_ACCESS_TO, N8N_BLOCK_FILE_ACCESS_TO_N8N_FILES); use a folder under an allowed path, e.g. ${DEFAULT_RECORD_FOLDER}`, { field: label.field });
    // the folder as written first (nothing is created outside the allowed paths), then as resolved (symlinks)
    if (blocked(path.resolve(folder))) throw refuse();
    await fs.mkdir(folder, { recursive: true, mode: 0o700 }).catch((e: NodeJS.ErrnoException) => {
      throw new SingpassFlowsError('INVALID_INPUT', `${label.where}: cannot create ${folder} (${e.code ?? e.message}); create it, or use a folder n8n may write, e.g. ${DEFAULT_RECORD_FOLDER}`, { field: label.field });
    });
    if (blocked(await h.resolvePath(path.join(folder, 'x.json')))) throw refuse();
  }
  return createSessionStore({ kind: 'folder', folder }, policy);
}

/** The checked store per folder, for the trigger (its webhook answers within the service's 2 s: no checks per delivery). */
const readStores = new Map<string, Promise<FileSessionStore>>();

/**
 * The file store the Singpass Sign Trigger reads session records from (it never writes). n8n gives a webhook no
 * file-system helpers, so the folder is checked here against N8N_RESTRICT_FILE_ACCESS_TO the way n8n checks it (the
 * resolved folder inside one of the allowed paths), once per folder and process. A folder that does not exist yet is
 * fine (no record yet: every delivery is "unknown session" until the first Save Session Record creates it).
 */
export function readOnlyRecordStore(folder: string, label: FolderLabel = TRIGGER_FOLDER_PARAMETER): Promise<FileSessionStore> {
  const key = folder.trim();
  let store = readStores.get(key);
  if (!store) {
    store = checkedFolder(key, label).then((dir) => new FileSessionStore(dir));
    store.catch(() => readStores.delete(key));
    readStores.set(key, store);
  }
  return store;
}

/** The store credential's folder, checked as the trigger checks it (its Test button: no n8n file helpers there). */
export function checkedTriggerFolder(folder: string): Promise<string> {
  return checkedFolder(folder.trim(), { where: 'Folder', field: 'Folder' });
}

/** The version-1 trigger's own folder parameter. */
const TRIGGER_FOLDER_PARAMETER: FolderLabel = { where: 'Session Record Folder', field: 'Session Record Folder' };

async function checkedFolder(folder: string, label: FolderLabel): Promise<string> {
  if (!folder || !path.isAbsolute(folder)) {
    throw new SingpassFlowsError('INVALID_INPUT', `${label.where}: give an absolute folder path (e.g. ${DEFAULT_RECORD_FOLDER})`, { field: label.field });
  }
  const resolved = await fs.realpath(folder).catch(() => path.resolve(folder));
  const allowed = (process.env.N8N_RESTRICT_FILE_ACCESS_TO ?? '').split(';').map((p) => p.trim()).filter(Boolean)
    .map((p) => path.resolve(p.startsWith('~') ? p.replace('~', os.homedir()) : p));
  const inside = (base: string) => resolved === base || resolved.startsWith(base.endsWith(path.sep) ? base : base + path.sep);
  if (allowed.length && !(await Promise.all(allowed.map((a) => fs.realpath(a).catch(() => a)))).some(inside)) {
    throw new SingpassFlowsError('INVALID_INPUT', `${label.where}: n8n does not allow access to ${folder} (N8N_RESTRICT_FILE_ACCESS_TO); use a folder under an allowed path, e.g. ${DEFAULT_RECORD_FOLDER}`, { field: label.field });
  }
  return resolved;
}
