import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_MAX_BYTES, httpRequest, requireHttpsUrl } from '../src/http';
import { constantTimeEqual, randomToken } from '../src/secrets';

describe('requireHttpsUrl (one rule for service, redirect and app-launch URLs)', () => {
  test('https is accepted; http only on a loopback host and only when allowed', () => {
    expect(requireHttpsUrl('u', 'https://id.singpass.gov.sg/fapi').host).toBe('id.singpass.gov.sg');
    for (const host of ['127.0.0.1:5156', 'localhost:8080', '[::1]:9000']) {
      expect(requireHttpsUrl('u', `http://${host}/cb`, { allowLoopbackHttp: true }).protocol).toBe('http:');
      expect(() => requireHttpsUrl('u', `http://${host}/cb`)).toThrow(/must use https/);
    }
    expect(() => requireHttpsUrl('u', 'http://example.com/cb', { allowLoopbackHttp: true })).toThrow(/must use https/);
  });

  test('custom schemes, relative and missing URLs are refused with INVALID_INPUT naming the field', () => {
    expect(() => requireHttpsUrl('redirectUri', 'myapp://callback')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field: 'redirectUri' }) }));
    expect(() => requireHttpsUrl('redirectUri', '/callback')).toThrow(/not a valid absolute URL/);
    expect(() => requireHttpsUrl('baseUrl', undefined, { example: 'https://x/api' })).toThrow(/a URL is required, e.g. https:\/\/x\/api/);
  });
});

describe('secrets', () => {
  test('constantTimeEqual compares content, whatever the lengths', () => {
    expect(constantTimeEqual('token one', 'token one')).toBe(true);
    expect(constantTimeEqual('token one', 'token onE')).toBe(false);
    expect(constantTimeEqual('short', 'a much longer value')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });

  test('randomToken: 43 base64url characters, never repeating', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => randomToken()));
    expect(seen.size).toBe(1000);
    for (const t of seen) expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('httpRequest: answers are capped in size and in time, body included', () => {
  let server: Server;
  let base: string;
  /** /stream/<bytes>: sent in 64 KB chunks without content-length; /trickle: headers, then a byte every 200 ms. */
  beforeAll(async () => {
    server = createServer((req, res) => {
      const streamed = /^\/stream\/(\d+)$/.exec(req.url ?? '');
      if (streamed) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' }); // chunked: no content-length
        let left = Number(streamed[1]);
        const push = (): void => {
          while (left > 0) {
            const n = Math.min(left, 64 * 1024);
            left -= n;
            if (!res.write(Buffer.alloc(n, 0x41))) return void res.once('drain', push);
          }
          res.end();
        };
        return push();
      }
      res.writeHead(200);
      const t = setInterval(() => res.write('x'), 200);
      res.on('close', () => clearInterval(t));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test('a streamed answer over the cap is refused while it streams; one under it is read whole', async () => {
    expect((await httpRequest(`${base}/stream/200000`, {}, { maxBytes: 300_000 })).body.length).toBe(200_000);
    await expect(httpRequest(`${base}/stream/400000`, {}, { maxBytes: 300_000 })).rejects.toMatchObject({
      code: 'HTTP_UNEXPECTED_RESPONSE', message: expect.stringContaining('more than 300000 bytes'),
    });
  });

  test('without an explicit cap, the default (16 MiB) applies', async () => {
    await expect(httpRequest(`${base}/stream/${DEFAULT_MAX_BYTES + 1}`)).rejects.toMatchObject({ code: 'HTTP_UNEXPECTED_RESPONSE' });
  });

  test('a server that sends headers and then trickles is cut off by the timeout with HTTP_TIMEOUT, not a raw abort', async () => {
    await expect(httpRequest(`${base}/trickle`, {}, { timeoutMs: 700 })).rejects.toMatchObject({ code: 'HTTP_TIMEOUT' });
  });
});

describe('httpRequest without a fetch of the caller: the direct transport', () => {
  let server: Server;
  let base: string;
  let connections = 0;
  const seen: { method?: string; type?: string; agent?: string; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method, type: req.headers['content-type'], agent: req.headers['user-agent'], body: Buffer.concat(chunks).toString('latin1') });
        if (req.url === '/moved') return void res.writeHead(302, { location: 'https://elsewhere.example/' }).end();
        if (req.url === '/big') return void res.writeHead(200, { 'content-length': '5000' }).end(Buffer.alloc(5000));
        res.writeHead(201, [['content-type', 'application/json'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2']]).end('{"ok":true}');
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test('bytes and form parameters arrive as sent, with a User-Agent; status, headers and body come back', async () => {
    seen.length = 0;
    const bytes = new Uint8Array([0x30, 0x03, 0x02, 0x01, 0xff]);
    const r = await httpRequest(`${base}/x`, { method: 'POST', headers: { 'content-type': 'application/ocsp-request' }, body: bytes });
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(r.body.toString()).toBe('{"ok":true}');
    await httpRequest(`${base}/x`, { method: 'POST', headers: { 'user-agent': 'mine' }, body: new URLSearchParams({ grant_type: 'authorization_code', code: 'a b' }) });
    expect(seen).toEqual([
      { method: 'POST', type: 'application/ocsp-request', agent: 'singpass-flows', body: Buffer.from(bytes).toString('latin1') },
      { method: 'POST', type: 'application/x-www-form-urlencoded;charset=UTF-8', agent: 'mine', body: 'grant_type=authorization_code&code=a+b' },
    ]);
  });

  test('calls one after another reuse one connection', async () => {
    await httpRequest(`${base}/x`);
    const before = connections;
    for (let i = 0; i < 5; i++) await httpRequest(`${base}/x`, { method: 'POST', body: 'x' });
    expect(connections).toBe(before);
  });

  test('a redirect is refused, an announced oversize answer is refused unread', async () => {
    await expect(httpRequest(`${base}/moved`)).rejects.toMatchObject({ code: 'HTTP_REDIRECT_REFUSED', details: expect.objectContaining({ status: 302 }) });
    await expect(httpRequest(`${base}/big`, {}, { maxBytes: 4000 })).rejects.toMatchObject({ code: 'HTTP_UNEXPECTED_RESPONSE', details: expect.objectContaining({ status: 200, maxBytes: 4000 }) });
  });

  test('nobody listening: HTTP_NETWORK naming the socket error, retryable', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(httpRequest(`http://127.0.0.1:${port}/x`)).rejects.toMatchObject({
      code: 'HTTP_NETWORK', message: expect.stringContaining('ECONNREFUSED'), details: expect.objectContaining({ retryable: true }),
    });
  });
});
