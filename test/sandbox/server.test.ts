import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'undici';
import { startSandbox, type Sandbox } from '../../sandbox';
import { parseSandboxArgs, runSandboxCommand } from '../../cli/commands/sandbox';
import { startTestDsap, type TestDsap } from './sign/test-dsap';

describe('startSandbox', () => {
  let sb: Sandbox;
  let dsap: TestDsap;
  beforeAll(async () => {
    sb = await startSandbox({ webhookRetryDelayMs: 10, webhookTimeoutMs: 8000, autoPhone: { user: 'p384', delayMs: 5 } });
    dsap = await startTestDsap({ apiBase: sb.urls.signApi, audience: sb.urls.signBase, keysUrl: sb.urls.signKeys });
    sb.sign.registerClient({ clientId: dsap.clientId, jwksUrl: dsap.jwksUrl, notificationUrl: dsap.webhookUrl });
  });
  afterAll(async () => {
    await sb?.close();
    await dsap?.close();
  });

  it('listens on 127.0.0.1 with an ephemeral port and builds every URL from it', () => {
    expect(sb.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sb.urls).toMatchObject({
      signApi: `${sb.baseUrl}/sign/api/v1`,
      signBase: `${sb.baseUrl}/sign`,
      signKeys: `${sb.baseUrl}/sign/static/.well-known/keys.json`,
      ocsp: `${sb.baseUrl}/ca/ocsp`,
      tsa: `${sb.baseUrl}/ca/tsa`,
      rootCert: `${sb.baseUrl}/ca/root.crt`,
      phone: `${sb.baseUrl}/phone`,
    });
    expect(sb.pki.baseUrl).toBe(sb.baseUrl);
  });

  it('serves the CA certificates, the service key set, the phone page and an index page', async () => {
    const root = Buffer.from(await (await fetch(sb.urls.rootCert)).arrayBuffer());
    expect(root.equals(sb.pki.root.certDer)).toBe(true);
    const keys = (await (await fetch(sb.urls.signKeys)).json()) as { keys: { kid: string }[] };
    expect(keys.keys.map((k) => k.kid)).toContain(sb.sign.currentKid());
    expect((await fetch(sb.urls.phone)).status).toBe(200);
    expect(await (await fetch(sb.baseUrl + '/')).text()).toContain(sb.urls.signApi);
  });

  it('runs a whole signing session with the automatic phone; the user certificate chains to the sandbox root', async () => {
    const created = await dsap.call('/doc-signing-sessions', { client_notification_token: 'tok', tenant_id: 'tenant' });
    expect(created.status).toBe(200);
    const ref = created.body.sign_ref as string;
    const [cert] = await dsap.waitFor(1, ref);
    const userCert = new crypto.X509Certificate(Buffer.from(cert.claims.user_cert as string, 'base64'));
    const intermediate = new crypto.X509Certificate(sb.pki.intermediate.certDer);
    expect(userCert.verify(intermediate.publicKey)).toBe(true);
    expect(userCert.raw.equals(sb.pki.users.p384.certDer)).toBe(true);
    const data = crypto.randomBytes(100);
    const docHash = crypto.createHash('sha256').update(data).digest('hex');
    const hash = await dsap.call(`/doc-signing-sessions/${encodeURIComponent(ref)}/hash`, {
      doc_name: 'a.pdf', doc_hash: docHash, challenge_code: '1234', nonce: cert.claims.nonce, domain_name: 'localhost',
    });
    expect(hash.status).toBe(200);
    const [, signed] = await dsap.waitFor(2, ref);
    expect(crypto.verify('sha256', data, { key: userCert.publicKey, dsaEncoding: 'der' }, Buffer.from(signed.claims.doc_hash_signature as string, 'hex'))).toBe(true);
  });

  it('keeps an idle connection open for seconds, as a service front end does: calls a few seconds apart share it', async () => {
    // undici keeps a connection for the server's keep-alive hint less 2 s: a 1 s hint would mean one TCP connect per call
    const client = new Client(sb.baseUrl);
    const connects: unknown[] = [];
    client.on('connect', (origin) => connects.push(origin));
    try {
      const first = await client.request({ path: '/sign/static/.well-known/keys.json', method: 'GET' });
      expect(first.headers['keep-alive']).toMatch(/timeout=(\d+)/);
      expect(Number(/timeout=(\d+)/.exec(String(first.headers['keep-alive']))![1])).toBeGreaterThanOrEqual(5);
      await first.body.dump();
      await new Promise((r) => setTimeout(r, 1200));
      await (await client.request({ path: '/ca/root.crt', method: 'GET' })).body.dump();
      expect(connects).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('mounts the Corppass (legacy and FAPI 2.0) and Singpass login providers at their issuers', async () => {
    expect(sb.urls.corppass).toBe(sb.corppass.issuer);
    expect(sb.urls.singpass).toBe(sb.singpass.issuer);
    expect(sb.urls.corppassFapi).toBe(sb.corppassFapi.issuer);
    for (const issuer of [sb.urls.corppass, sb.urls.corppassFapi, sb.urls.singpass]) {
      expect(issuer.startsWith(sb.baseUrl + '/')).toBe(true);
      const res = await fetch(`${issuer}/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { issuer: string }).issuer).toBe(issuer);
    }
  });
});

describe('startSandbox with a directory', () => {
  it('keeps the root CA, the service signing key and registered DSAPs across restarts; writes root-ca.pem', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-'));
    try {
      const first = await startSandbox({ dir, signClients: [{ clientId: 'kept', notificationUrl: 'http://127.0.0.1:9/hook' }] });
      const root = first.pki.root.certDer;
      const kid = first.sign.currentKid();
      await first.close();
      const second = await startSandbox({ dir });
      try {
        expect(second.pki.root.certDer.equals(root)).toBe(true);
        expect(second.sign.currentKid()).toBe(kid);
        expect(second.sign.clients().map((c) => c.clientId)).toContain('kept');
        expect(second.rootCertPath).toBe(path.join(dir, 'root-ca.pem'));
        expect(new crypto.X509Certificate(fs.readFileSync(second.rootCertPath as string)).raw.equals(root)).toBe(true);
      } finally {
        await second.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('singpass-flows sandbox (CLI)', () => {
  it('parses options with defaults (port 5156, dir .sandbox)', () => {
    expect(parseSandboxArgs([])).toMatchObject({ port: 5156, dir: '.sandbox' });
    expect(parseSandboxArgs(['--port', '0', '--no-persist', '--auto-phone'])).toMatchObject({ port: 0, dir: undefined, autoPhone: {} });
    expect(parseSandboxArgs(['--client-id', 'c', '--webhook-url', 'http://127.0.0.1:1/h', '--jwks-url', 'http://127.0.0.1:1/j']).signClients).toEqual([
      { clientId: 'c', notificationUrl: 'http://127.0.0.1:1/h', jwksUrl: 'http://127.0.0.1:1/j' },
    ]);
  });
  it.each([
    [['--port', '70000']],
    [['--port', 'abc']],
    [['--client-id', 'c']],
    [['--client-id', 'c', '--webhook-url', 'ftp://x']],
    [['--bogus']],
  ])('rejects %j', (argv) => {
    expect(() => parseSandboxArgs(argv as string[])).toThrow();
  });
  it('starts, prints its URLs (including the registered DSAP), serves them, and stops', async () => {
    const lines: string[] = [];
    let seen = 0;
    const code = await runSandboxCommand(['--port', '0', '--no-persist', '--client-id', 'cli-dsap', '--webhook-url', 'http://127.0.0.1:9/h'], {
      log: (l) => lines.push(l),
      stop: async (sb) => {
        seen = (await fetch(sb.urls.signKeys)).status;
      },
    });
    expect(code).toBe(0);
    expect(seen).toBe(200);
    const out = lines.join('\n');
    expect(out).toMatch(/API base URL\s+http:\/\/127\.0\.0\.1:\d+\/sign\/api\/v1/);
    expect(out).toMatch(/root certificate\s+http:\/\/127\.0\.0\.1:\d+\/ca\/root\.crt/);
    expect(out).toContain('cli-dsap');
    expect(out).toContain('Sandbox stopped.');
  });
});

describe('singpass-flows sandbox (CLI) errors', () => {
  it('a port in use gives an actionable INVALID_INPUT error', async () => {
    const sb = await startSandbox({});
    try {
      const port = new URL(sb.baseUrl).port;
      await expect(runSandboxCommand(['--port', port, '--no-persist'], { log: () => undefined, stop: async () => undefined })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringContaining('already in use'),
      });
    } finally {
      await sb.close();
    }
  });
});
