import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { invalidInput } from '../src/errors';

/** A CLI command: each lives in `cli/commands/<name>.ts` and is listed in `cli/index.ts`. */
export interface CliCommand {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Full `--help` text (usage line, options, an example). */
  help: string;
  /** Returns the process exit code. `argv` excludes the command name. */
  run(argv: string[]): Promise<number>;
}

/** True when the user asked for help; commands print `help` and return 0. */
export function wantsHelp(argv: string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** Read a file the user named on the command line; a missing or unreadable file is an INVALID_INPUT naming it. */
export function readUserFile(path: string, option: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a folder' : (e as Error).message;
    throw invalidInput(option, `cannot read "${path}": ${why}`);
  }
}

/**
 * Check, before any work starts, that a file the user named for output can be written: its folder exists, is a
 * folder and is writable, and the path itself is not a folder. INVALID_INPUT naming the option otherwise.
 */
export function checkWritableFile(path: string, option: string): void {
  const full = resolve(path);
  const folder = dirname(full);
  let isDir: boolean;
  try {
    isDir = statSync(folder).isDirectory();
  } catch {
    throw invalidInput(option, `the folder "${folder}" does not exist; create it first or choose another path`);
  }
  if (!isDir) throw invalidInput(option, `"${folder}" is not a folder`);
  try {
    accessSync(folder, constants.W_OK);
  } catch {
    throw invalidInput(option, `the folder "${folder}" is not writable`);
  }
  let target;
  try {
    target = statSync(full);
  } catch {
    return; // does not exist yet: fine
  }
  if (target.isDirectory()) throw invalidInput(option, `"${full}" is a folder; give a file name`);
  try {
    accessSync(full, constants.W_OK);
  } catch {
    throw invalidInput(option, `"${full}" exists and is not writable`);
  }
}
