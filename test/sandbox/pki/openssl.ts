import { execFile } from 'node:child_process';

/** Run a tool asynchronously (the servers under test live in this process) and return stdout+stderr and exit code. */
export function tool(cmd: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, out: `${stdout}\n${stderr}` });
    });
  });
}
