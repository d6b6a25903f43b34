import type { CliCommand } from '../command';

/** Every CLI command, in the order `--help` lists them. Add new commands here. */
export const commands: CliCommand[] = [];
