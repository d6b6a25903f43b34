#!/usr/bin/env node
import { isSingpassFlowsError } from '../src/errors';
import type { CliCommand } from './command';
import { commands } from './commands';

const USAGE = `singpass-flows <command> [options]

Singpass document signing, Corppass and Singpass login tools, and a local sandbox of those services.

Commands:
${commands.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`).join('\n')}

Run "singpass-flows <command> --help" for the options of a command.`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return 0;
  }
  const command: CliCommand | undefined = commands.find((c) => c.name === name);
  if (!command) {
    console.error(`Unknown command "${name}".\n\n${USAGE}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (e) {
    if (isSingpassFlowsError(e)) console.error(`Error ${e.code}: ${e.message}`);
    else console.error(`Error: ${(e as Error)?.message ?? e}`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
