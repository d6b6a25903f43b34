import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Minimal HTTP plumbing shared by the sandbox services. The sandbox is a peer of the client: it must not import
 * anything from src/ that encodes protocol rules (wire names, assertion builder, token verifier, CMS builder).
 */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void> | void;

/** A sandbox service mounted under a path prefix of the one sandbox server (e.g. `/sign`, `/corppass`). */
export interface SandboxService {
  prefix: string;
  handle: Handler;
  close?(): Promise<void>;
}

export async function readBody(req: http.IncomingMessage, limit = 50 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(data.length), ...headers });
  res.end(data);
}

export function sendBytes(res: http.ServerResponse, status: number, body: Buffer | string, contentType: string, headers: Record<string, string> = {}): void {
  const data = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { 'content-type': contentType, 'content-length': String(data.length), ...headers });
  res.end(data);
}

export interface RunningServer {
  server: http.Server;
  /** e.g. `http://127.0.0.1:54321` (no trailing slash). */
  baseUrl: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Listen on 127.0.0.1 only (port 0 = ephemeral, which every test should use). Requests are routed to the service
 * whose prefix matches the path; errors become 500 so a sandbox bug never kills the process.
 */
export async function listen(handler: Handler, port = 0, host = '127.0.0.1'): Promise<RunningServer> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? host}`);
    Promise.resolve()
      .then(() => handler(req, res, url))
      .catch((err) => {
        if (!res.headersSent) sendJson(res, 500, { error: 'SERVER_SIDE_ERROR', error_description: String((err as Error)?.message ?? err) });
        else res.destroy();
      });
  });
  // Idle connections kept as a service's front end keeps them: with a shorter hint a client (undici keeps a
  // connection for the hint less 2 s) opens a TCP connection per call, which no live service makes it do.
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    baseUrl: `http://${host}:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** Route by path prefix; unknown paths get 404. */
export function mount(services: SandboxService[]): Handler {
  return async (req, res, url) => {
    for (const s of services) {
      if (url.pathname === s.prefix || url.pathname.startsWith(s.prefix + '/')) return s.handle(req, res, url);
    }
    sendJson(res, 404, { error: 'NOT_FOUND', error_description: `no sandbox route for ${url.pathname}` });
  };
}
