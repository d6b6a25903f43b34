import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MARKER, leftovers, killAll } = require('../../scripts/test-run/leftovers.js') as {
  MARKER: string;
  leftovers(marker: string, except?: number[]): Array<{ pid: number; command: string; ports: number[] }>;
  killAll(found: Array<{ pid: number }>): void;
};

/** A detached server on 127.0.0.1 (its own session, as the tests' servers are) that prints its port. */
async function server(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['-e', `const s = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log(s.address().port)); setTimeout(() => {}, 60000);`],
    { env, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { child, port: Number(line.toString().trim()) };
}

describe('the run\'s leftover check', () => {
  it('finds a detached process of the run with its listening port, and not once it is killed', async () => {
    const marker = randomBytes(8).toString('hex');
    const { child, port } = await server({ ...process.env, [MARKER]: marker });
    try {
      const found = leftovers(marker);
      expect(found).toEqual([expect.objectContaining({ pid: child.pid, ports: [port] })]);
      killAll(found);
      await once(child, 'exit');
      expect(leftovers(marker)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('ignores processes of another run and the pids it is told to spare', async () => {
    const marker = randomBytes(8).toString('hex');
    const other = await server({ ...process.env, [MARKER]: `${marker}x` });
    const spared = await server({ ...process.env, [MARKER]: marker });
    try {
      expect(leftovers(marker, [spared.child.pid!])).toEqual([]);
      expect(leftovers(marker).map((p) => p.pid)).toEqual([spared.child.pid]);
    } finally {
      other.child.kill('SIGKILL');
      spared.child.kill('SIGKILL');
    }
  });
});
