import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { MARKER, REGISTRY, leftovers, killAll, register } = require('../../scripts/test-run/leftovers.js') as {
  MARKER: string;
  REGISTRY: string;
  leftovers(marker: string, except?: number[], registry?: string): Array<{ pid: number; command: string; ports: number[] }>;
  killAll(found: Array<{ pid: number }>): void;
  register(pid: number | undefined): void;
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

  it('finds a registered server that kept no marker (as Redis or PostgreSQL, whose title overwrites their environment), until it ends', async () => {
    const marker = randomBytes(8).toString('hex');
    const registry = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-registry-'));
    const env = { ...process.env };
    delete env[MARKER];
    const { child, port } = await server(env);
    const saved = process.env[REGISTRY];
    try {
      process.env[REGISTRY] = registry;
      register(child.pid);
      expect(leftovers(marker)).toEqual([]);
      expect(leftovers(marker, [process.pid], registry)).toEqual([expect.objectContaining({ pid: child.pid, ports: [port] })]);
      child.kill('SIGKILL');
      await once(child, 'exit');
      expect(leftovers(marker, [process.pid], registry)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env[REGISTRY]; else process.env[REGISTRY] = saved;
      child.kill('SIGKILL');
      fs.rmSync(registry, { recursive: true, force: true });
    }
  });
});
