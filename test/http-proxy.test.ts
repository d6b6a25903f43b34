/**
 * Outbound HTTP through a REAL proxy: Debian's tinyproxy, started here on 127.0.0.1 with a temporary configuration
 * (basic auth on, so a request that gets through also proves the credentials in the proxy URL were sent). A request
 * "went through the proxy" when tinyproxy logged it AND the target saw tinyproxy's Via header (forwarded http://) or
 * tinyproxy logged the CONNECT (tunnelled https://). https targets run in a child process that trusts the target's
 * self-signed certificate (NODE_EXTRA_CA_CERTS is read at process start only).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { inspect, promisify } from 'node:util';
import { httpRequest } from '../src/http';
import { bypassesProxy, closeOutboundProxies, proxyRouteFor } from '../src/http-proxy';
import { RemoteKeySet } from '../src/keys/remote-key-set';
import { randomToken } from '../src/secrets';

const run = promisify(execFile);
const REPO = path.resolve(__dirname, '..');
const PROXY_VARS = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY', 'no_proxy', 'NO_PROXY'];

const USER = 'flows';
const PASSWORD = `pw-${randomToken().slice(0, 16)}`;
/** Everything that would reveal the proxy password: itself and the Basic credentials built from it. */
const SECRETS = [PASSWORD, Buffer.from(`${USER}:${PASSWORD}`).toString('base64')];
const leaks = (e: unknown): string[] => {
  const text = `${inspect(e, { depth: Infinity })} ${JSON.stringify(e)}`;
  return SECRETS.filter((s) => text.includes(s));
};

let tmp: string;
let proxy: ChildProcess;
let proxyPort: number;
let proxyLog: string;
let target: Server;
let targetUrl: string;
let tlsTarget: Server;
let tlsTargetUrl: string;
let certFile: string;
/** What the plain-http target saw, by request path: whether tinyproxy's Via header was on it. */
const seen = new Map<string, { via?: string }>();
let tlsSeen = 0;

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

const proxyUrl = (password = PASSWORD, port = proxyPort) => `http://${USER}:${password}@127.0.0.1:${port}`;
const logText = (): string => fs.readFileSync(proxyLog, 'utf8');
/** A fresh path per request, so the proxy log and the target's record name exactly one request. */
const uniquePath = (): string => `/t/${randomToken().slice(0, 12)}`;

function setEnv(vars: Record<string, string>): void {
  for (const name of PROXY_VARS) delete process.env[name];
  Object.assign(process.env, vars);
}

/** GET through our client in a child process (for https targets: it trusts the target's certificate). */
async function childGet(url: string, env: Record<string, string>): Promise<{ status?: number; body?: string; code?: string; message?: string; inspected?: string }> {
  const script = `
    const { httpRequest } = require(${JSON.stringify(path.join(REPO, 'src/http.ts'))});
    const { inspect } = require('node:util');
    httpRequest(process.argv[1], {}, { timeoutMs: 5000 }).then(
      (r) => console.log(JSON.stringify({ status: r.status, body: r.body.toString() })),
      (e) => console.log(JSON.stringify({ code: e.code, message: e.message, inspected: inspect(e, { depth: Infinity }) + JSON.stringify(e) })));`;
  const { stdout } = await run(process.execPath, ['-r', path.join(REPO, 'test/helpers/ts-register.js'), '-e', script, url], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? '', NODE_EXTRA_CA_CERTS: certFile, ...env },
    timeout: 30_000,
  });
  return JSON.parse(stdout.trim()) as { status?: number; body?: string; code?: string; message?: string; inspected?: string };
}

const savedEnv: Record<string, string | undefined> = {};

beforeAll(async () => {
  for (const name of PROXY_VARS) savedEnv[name] = process.env[name];
  setEnv({});
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'http-proxy-test-'));

  target = createServer((req: IncomingMessage, res) => {
    seen.set(req.url ?? '', { via: req.headers.via });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url === '/keys' ? JSON.stringify({ keys: [] }) : JSON.stringify({ path: req.url }));
  });
  targetUrl = `http://127.0.0.1:${await listen(target)}`;

  // A self-signed certificate for 127.0.0.1 (openssl, a test tool), trusted by the child processes only.
  certFile = path.join(tmp, 'target.crt');
  const keyFile = path.join(tmp, 'target.key');
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile]);
  tlsTarget = createHttpsServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) }, (req, res) => {
    tlsSeen++;
    res.end(`tls ${req.url}`);
  });
  tlsTargetUrl = `https://127.0.0.1:${await listen(tlsTarget)}`;

  // tinyproxy on 127.0.0.1 only, no ConnectPort line (CONNECT allowed to any port: the targets use free ports).
  proxyPort = await freePort();
  proxyLog = path.join(tmp, 'tinyproxy.log');
  const conf = path.join(tmp, 'tinyproxy.conf');
  fs.writeFileSync(conf, [
    `Port ${proxyPort}`, 'Listen 127.0.0.1', 'Allow 127.0.0.1', 'Timeout 30', 'MaxClients 20', 'LogLevel Info',
    `LogFile "${proxyLog}"`, `PidFile "${path.join(tmp, 'tinyproxy.pid')}"`, `BasicAuth ${USER} ${PASSWORD}`, '',
  ].join('\n'));
  const binary = [...(process.env.PATH ?? '').split(':'), '/usr/sbin'].map((d) => path.join(d, 'tinyproxy')).find((f) => fs.existsSync(f));
  if (!binary) throw new Error('tinyproxy is not installed: run scripts/install-test-tools.sh');
  proxy = spawn(binary, ['-d', '-c', conf], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  while (!(fs.existsSync(proxyLog) && logText().includes('Accepting connections'))) {
    if (proxy.exitCode !== null || Date.now() > deadline) throw new Error(`tinyproxy did not start (exit ${proxy.exitCode})`);
    await new Promise((r) => setTimeout(r, 50));
  }
});

afterEach(() => setEnv({}));

afterAll(async () => {
  await closeOutboundProxies();
  if (proxy && proxy.exitCode === null) {
    const exited = new Promise((resolve) => proxy.once('exit', resolve));
    proxy.kill('SIGTERM');
    await exited;
  }
  await Promise.all([target, tlsTarget].map((s) => s && new Promise((resolve) => s.close(resolve))));
  fs.rmSync(tmp, { recursive: true, force: true });
  for (const name of PROXY_VARS) {
    if (savedEnv[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnv[name];
  }
});

describe('outbound HTTP honours the proxy variables (real tinyproxy on 127.0.0.1)', () => {
  test('without proxy variables nothing goes through the proxy', async () => {
    const p = uniquePath();
    const res = await httpRequest(targetUrl + p);
    expect(res.status).toBe(200);
    expect(seen.get(p)).toEqual({ via: undefined });
    expect(logText()).not.toContain(p);
  });

  test('HTTP_PROXY: an http:// request is forwarded by the proxy, credentials from the URL accepted', async () => {
    setEnv({ HTTP_PROXY: proxyUrl() });
    const p = uniquePath();
    const res = await httpRequest(targetUrl + p);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ path: p });
    expect(seen.get(p)?.via).toMatch(/tinyproxy/);
    expect(logText()).toContain(`GET ${targetUrl}${p} HTTP/1.1`);
  });

  test('a key set (one of the callers) goes through the proxy too', async () => {
    setEnv({ HTTP_PROXY: proxyUrl() });
    seen.delete('/keys');
    await new RemoteKeySet(`${targetUrl}/keys`).prefetch();
    expect(seen.get('/keys')?.via).toMatch(/tinyproxy/);
  });

  test('the environment is read per request: setting and removing the variable takes effect at once', async () => {
    const first = uniquePath();
    await httpRequest(targetUrl + first);
    setEnv({ HTTP_PROXY: proxyUrl() });
    const second = uniquePath();
    await httpRequest(targetUrl + second);
    setEnv({});
    const third = uniquePath();
    await httpRequest(targetUrl + third);
    expect([first, second, third].map((p) => Boolean(seen.get(p)?.via))).toEqual([false, true, false]);
  });

  test('lower-case http_proxy wins over HTTP_PROXY; ALL_PROXY applies when the scheme has no variable', async () => {
    const downPort = await freePort();
    setEnv({ http_proxy: proxyUrl(), HTTP_PROXY: proxyUrl(PASSWORD, downPort) });
    const a = uniquePath();
    expect((await httpRequest(targetUrl + a)).status).toBe(200);
    setEnv({ ALL_PROXY: proxyUrl() });
    const b = uniquePath();
    expect((await httpRequest(targetUrl + b)).status).toBe(200);
    expect([a, b].map((p) => seen.get(p)?.via)).toEqual([expect.stringMatching(/tinyproxy/), expect.stringMatching(/tinyproxy/)]);
  });

  test('NO_PROXY excludes a host (and only that host and port)', async () => {
    const port = new URL(targetUrl).port;
    const direct = async (noProxy: string): Promise<boolean> => {
      setEnv({ HTTP_PROXY: proxyUrl(), NO_PROXY: noProxy });
      const p = uniquePath();
      await httpRequest(targetUrl + p);
      return seen.get(p)?.via === undefined && !logText().includes(p);
    };
    expect(await direct('127.0.0.1')).toBe(true);
    expect(await direct(`example.org, 127.0.0.1:${port}`)).toBe(true);
    expect(await direct('127.0.0.0/8')).toBe(true);
    expect(await direct('*')).toBe(true);
    expect(await direct('localhost')).toBe(false); // another name, not the same host
    expect(await direct('127.0.0.1:1')).toBe(false); // another port
    setEnv({ HTTP_PROXY: proxyUrl(), no_proxy: '127.0.0.1' });
    const lower = uniquePath();
    await httpRequest(targetUrl + lower);
    expect(seen.get(lower)?.via).toBeUndefined();
  });

  test('a fetch passed by the caller is used as given, whatever the proxy variables say', async () => {
    setEnv({ HTTP_PROXY: proxyUrl(PASSWORD, await freePort()) }); // nothing listens there
    const p = uniquePath();
    const res = await httpRequest(targetUrl + p, {}, { fetch: (url, init) => fetch(url, init) });
    expect(res.status).toBe(200);
    expect(seen.get(p)?.via).toBeUndefined();
  });

  test('a proxy that is down: HTTP_NETWORK naming the proxy without its credentials, and pointing at NO_PROXY', async () => {
    const downPort = await freePort();
    setEnv({ HTTPS_PROXY: proxyUrl(), HTTP_PROXY: proxyUrl(PASSWORD, downPort) });
    const err = await httpRequest(`${targetUrl}/x?code=abc`).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'HTTP_NETWORK', details: { url: `${targetUrl}/x`, proxy: `http://***@127.0.0.1:${downPort}`, retryable: true } });
    const message = (err as Error).message;
    expect(message).toContain(`Cannot reach ${targetUrl}/x through the proxy http://***@127.0.0.1:${downPort} (HTTP_PROXY): ECONNREFUSED`);
    expect(message).toContain('add 127.0.0.1,localhost to NO_PROXY');
    expect(leaks(err)).toEqual([]);
  });

  test('a proxy that accepts the connection and never answers: HTTP_TIMEOUT naming the proxy', async () => {
    const silent = createNetServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      setEnv({ HTTP_PROXY: proxyUrl(PASSWORD, port) });
      const err = await httpRequest(`${targetUrl}/slow`, {}, { timeoutMs: 300 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'HTTP_TIMEOUT', message: `No answer from ${targetUrl}/slow through the proxy http://***@127.0.0.1:${port} (HTTP_PROXY) within 300 ms` });
      expect(leaks(err)).toEqual([]);
    } finally {
      await closeOutboundProxies();
      silent.close();
    }
  });

  test('a proxy that asks for credentials (407 to a forwarded request): HTTP_NETWORK, not the service\'s answer', async () => {
    // tinyproxy answers a forwarded request with bad credentials by 401, so this proxy is a plain server that
    // answers every request with 407 + Proxy-Authenticate, as squid does.
    let asked = 0;
    const strict = createServer((_req, res) => {
      asked++;
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="corp"' }).end('proxy authentication required');
    });
    const port = await listen(strict);
    try {
      setEnv({ HTTP_PROXY: `http://127.0.0.1:${port}` });
      const err = await httpRequest(`${targetUrl}/y`).catch((e: unknown) => e);
      expect(asked).toBe(1);
      expect(err).toMatchObject({ code: 'HTTP_NETWORK', details: { proxyStatus: 407, retryable: false } });
      expect((err as Error).message).toMatch(/needs a user name and password: put them in HTTP_PROXY as http:\/\/user:password@host:port/);
      setEnv({ HTTP_PROXY: `http://${USER}:${PASSWORD}@127.0.0.1:${port}` });
      const refused = await httpRequest(`${targetUrl}/y`).catch((e: unknown) => e);
      expect((refused as Error).message).toContain(`The proxy http://***@127.0.0.1:${port} (HTTP_PROXY) refused the request to ${targetUrl}/y: it refused the user name and password in HTTP_PROXY (HTTP 407)`);
      expect(leaks(refused)).toEqual([]);
    } finally {
      await closeOutboundProxies();
      await new Promise((resolve) => strict.close(resolve));
    }
  });

  test('a proxy variable that is not a usable proxy URL: INVALID_INPUT naming the variable, value not echoed', async () => {
    setEnv({ HTTP_PROXY: `socks5://${USER}:${PASSWORD}@127.0.0.1:1080` });
    const socks = await httpRequest(`${targetUrl}/z`).catch((e: unknown) => e);
    expect(socks).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'HTTP_PROXY' } });
    expect((socks as Error).message).toBe('HTTP_PROXY: names a socks5 proxy (socks5://***@127.0.0.1:1080); only http:// and https:// proxies are supported');
    setEnv({ HTTP_PROXY: `http://${USER}:${PASSWORD}@[bad` });
    const bad = await httpRequest(`${targetUrl}/z`).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'HTTP_PROXY' } });
    expect([...leaks(socks), ...leaks(bad)]).toEqual([]);
  });
});

describe('https:// targets: tunnelled with CONNECT (child processes trusting the target certificate)', () => {
  test('HTTPS_PROXY: the request is tunnelled through the proxy; TLS is end to end', async () => {
    const before = tlsSeen;
    const p = uniquePath();
    const out = await childGet(tlsTargetUrl + p, { HTTPS_PROXY: proxyUrl() });
    expect(out).toEqual({ status: 200, body: `tls ${p}` });
    expect(tlsSeen).toBe(before + 1);
    expect(logText()).toContain(`CONNECT ${new URL(tlsTargetUrl).host} HTTP/1.1`);
  });

  test('HTTP_PROXY alone does not apply to https:// targets; NO_PROXY excludes them too', async () => {
    const connects = (): number => logText().split(`CONNECT ${new URL(tlsTargetUrl).host} `).length;
    const before = connects();
    expect(await childGet(`${tlsTargetUrl}/a`, { HTTP_PROXY: proxyUrl() })).toEqual({ status: 200, body: 'tls /a' });
    expect(await childGet(`${tlsTargetUrl}/b`, { HTTPS_PROXY: proxyUrl(), NO_PROXY: 'localhost,127.0.0.1' })).toEqual({ status: 200, body: 'tls /b' });
    expect(connects()).toBe(before);
  });

  test('a target the proxy cannot connect to: HTTP_NETWORK with the proxy\'s answer to CONNECT', async () => {
    const closed = `https://127.0.0.1:${await freePort()}`;
    const out = await childGet(`${closed}/d`, { HTTPS_PROXY: proxyUrl() });
    expect(out.code).toBe('HTTP_NETWORK');
    expect(out.message).toMatch(new RegExp(`^Cannot reach ${closed.replace(/\./g, '\\.')}/d through the proxy http://\\*\\*\\*@127\\.0\\.0\\.1:${proxyPort} \\(HTTPS_PROXY\\): the proxy could not open a tunnel to it \\(HTTP 5\\d\\d\\)\\. .*NO_PROXY`));
    expect(out.inspected).not.toContain(PASSWORD);
  });

  test('a proxy refusing the tunnel for bad credentials: HTTP_NETWORK saying so, password nowhere', async () => {
    const out = await childGet(`${tlsTargetUrl}/c`, { HTTPS_PROXY: proxyUrl(`wrong-${PASSWORD}`) });
    expect(out.code).toBe('HTTP_NETWORK');
    expect(out.message).toMatch(new RegExp(`^The proxy http://\\*\\*\\*@127\\.0\\.0\\.1:${proxyPort} \\(HTTPS_PROXY\\) refused the request to ${tlsTargetUrl.replace(/\./g, '\\.')}/c: it refused the user name and password in HTTPS_PROXY \\(HTTP 40[17]\\)$`));
    expect(out.inspected).not.toContain(PASSWORD);
    expect(out.inspected).not.toContain(Buffer.from(`${USER}:wrong-${PASSWORD}`).toString('base64'));
  });
});

describe('routing rules (pure)', () => {
  const u = (s: string) => new URL(s);
  test('NO_PROXY entries: domains with subdomains, leading dot or *., ports, IPv6, CIDR', () => {
    expect(bypassesProxy(u('https://api.example.com/x'), 'example.com')).toBe(true);
    expect(bypassesProxy(u('https://api.example.com/x'), '.example.com')).toBe(true);
    expect(bypassesProxy(u('https://example.com/x'), '*.example.com')).toBe(true);
    expect(bypassesProxy(u('https://notexample.com/x'), 'example.com')).toBe(false);
    expect(bypassesProxy(u('https://example.com/x'), 'example.com:443')).toBe(true);
    expect(bypassesProxy(u('https://example.com:8443/x'), 'example.com:443')).toBe(false);
    expect(bypassesProxy(u('http://[::1]:8080/x'), '::1')).toBe(true);
    expect(bypassesProxy(u('http://[::1]:8080/x'), '[::1]:8080')).toBe(true);
    expect(bypassesProxy(u('http://10.1.2.3/x'), '10.0.0.0/8')).toBe(true);
    expect(bypassesProxy(u('http://11.1.2.3/x'), '10.0.0.0/8')).toBe(false);
    expect(bypassesProxy(u('http://EXAMPLE.com/x'), ' Example.COM ')).toBe(true);
    expect(bypassesProxy(u('http://example.com/x'), ', ,')).toBe(false);
  });

  test('the scheme picks the variable; a proxy without a scheme is plain http; credentials are redacted', () => {
    const env = { HTTP_PROXY: 'http://a:b@p1:3128', HTTPS_PROXY: 'user:pw@p2:8080' };
    expect(proxyRouteFor(u('http://x/'), env)).toMatchObject({ variable: 'HTTP_PROXY', display: 'http://***@p1:3128' });
    expect(proxyRouteFor(u('https://x/'), env)).toMatchObject({ variable: 'HTTPS_PROXY', display: 'http://***@p2:8080' });
    expect(proxyRouteFor(u('https://x/'), { HTTP_PROXY: 'http://p1:3128' })).toBeUndefined();
    expect(proxyRouteFor(u('https://x/'), { HTTPS_PROXY: '  ' })).toBeUndefined();
  });
});
