import type { CliCommand } from '../command';
import { sandboxCommand } from './sandbox';
import { keysCommand } from './keys';
import { demoCommand } from './demo';
import { signCommand } from './sign';
import { serveCommand } from './serve';
import { verifyCommand } from './verify';

/** Every CLI command, in the order `--help` lists them. Add new commands here. */
export const commands: CliCommand[] = [demoCommand, sandboxCommand, keysCommand, signCommand, serveCommand, verifyCommand];
