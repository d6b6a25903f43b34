import { readFileSync } from 'node:fs';
import { invalidInput } from '../errors';

/** A CLI command: each lives in `src/cli/commands/<name>.ts` and is listed in `src/cli/index.ts`. */
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
