import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports';
import { registerServer } from './servers';

export interface RunningNginx {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Seconds nginx took to answer each request whose URI starts with `prefix` (with `logRequestTime`). */
  requestTimes(prefix: string): number[];
  stop(): Promise<void>;
}

/**
 * Debian's nginx as a round-robin reverse proxy on 127.0.0.1 in front of `upstreams` ("127.0.0.1:port"), as an ops
 * team puts it in front of several instances behind one URL. Own prefix folder, no daemon, stopped by `stop()`.
 * An upstream that refuses the connection is skipped for that request (`proxy_next_upstream error`), never marked
 * down (`max_fails=0`): a restarted instance gets traffic again at once.
 */
export async function startNginx(upstreams: string[], options: { logRequestTime?: boolean } = {}): Promise<RunningNginx> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'nginx-'));
  // Run as root, nginx's workers switch to an unprivileged user that must reach the request-body temp folder inside
  // (bodies over 16 KB, e.g. a PDF upload, are buffered there; a 0700 folder makes them fail with 500)
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'logs'));
  const conf = `
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log warn;
events { worker_connections 512; }
http {
  log_format timing '$request_time $request_method $request_uri $status';
  access_log ${dir}/logs/access.log${options.logRequestTime ? ' timing' : ''};
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  client_max_body_size 60m;
  upstream app { ${upstreams.map((u) => `server ${u} max_fails=0;`).join(' ')} }
  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://app; proxy_connect_timeout 1s; proxy_read_timeout 30s; proxy_next_upstream error timeout; }
  }
}`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const bin = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
  const child: ChildProcess = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  registerServer(child.pid);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(500) });
      break;
    } catch {
      if (Date.now() > end) throw new Error(`nginx did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    requestTimes(prefix) {
      let text = '';
      try {
        text = readFileSync(join(dir, 'logs', 'access.log'), 'utf8');
      } catch {
        return [];
      }
      return text.split('\n').map((l) => l.split(' ')).filter((f) => f.length >= 4 && f[2]!.startsWith(prefix)).map((f) => Number(f[0]));
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
