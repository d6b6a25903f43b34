import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../cli';
import { createServer } from 'node:net';
import { startSandbox } from '../../sandbox';
import { generateClientKeys } from '../../src/keys';
import { run, samplePdf } from '../pades/ltv-helpers';
import { fixture } from '../fixtures/pdfs';

/** A currently free loopback port (the config mode listens on a fixed port, as a real deployment does). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

let dir: string;
let out: string[];
let err: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-sign-'));
  writeFileSync(join(dir, 'in.pdf'), await samplePdf('CLI sign test'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  out = []; err = [];
  jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => { out.push(a.join(' ')); });
  jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => { err.push(a.join(' ')); });
});
afterEach(() => jest.restoreAllMocks());

it('sign --help', async () => {
  expect(await main(['sign', '--help'])).toBe(0);
  expect(out.join('\n')).toContain('Usage: singpass-flows sign --in <file.pdf> --out <signed.pdf>');
});

it('signs a PDF at B-LTA through the whole sandbox session; verify confirms it with the written root', async () => {
  const pdfOut = join(dir, 'out.pdf');
  const rootOut = join(dir, 'root.pem');
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', pdfOut, '--level', 'B-LTA', '--root-out', rootOut, '--doc-name', 'Test.pdf'])).toBe(0);
  const log = out.join('\n');
  for (const step of ['1/8 session', '2/8 QR scanned', '3/8 PDF prepared', '4/8 hash submitted as "Test.pdf"', '5/8 approved', '6/8 signature checked and embedded', '7/8 validation data added', '7/8 document timestamp added', '8/8 verified: valid, level B-LTA']) {
    expect(log).toContain(step);
  }
  const signed = readFileSync(pdfOut);
  expect(signed.subarray(0, readFileSync(join(dir, 'in.pdf')).length).equals(readFileSync(join(dir, 'in.pdf')))).toBe(true);
  const { stdout } = await run('qpdf', ['--check', pdfOut]);
  expect(stdout).toContain('No syntax or stream encoding errors found');

  out = [];
  expect(await main(['verify', pdfOut, '--root', rootOut, '--json'])).toBe(0);
  const report = JSON.parse(out.join('\n'));
  expect(report.valid).toBe(true);
  expect(report.level).toBe('B-LTA');
});

it('--app-link is sent with the hash; one that is not an https link is a usage error before any session', async () => {
  const pdfOut = join(dir, 'app-link.pdf');
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', pdfOut, '--level', 'B-B', '--app-link', 'https://app.example.sg/signed'])).toBe(0);
  expect(out.join('\n')).toContain('8/8 verified: valid, level B-B');
  out = []; err = [];
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', join(dir, 'y.pdf'), '--app-link', 'myapp://signed'])).toBe(2);
  expect(err.join('\n')).toBe('--app-link must use https://');
  expect(out).toEqual([]); // no sandbox, no session
});

it('B-B level works too', async () => {
  const pdfOut = join(dir, 'bb.pdf');
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', pdfOut, '--level', 'b-b', '--user', 'p384'])).toBe(0);
  expect(out.join('\n')).toContain('8/8 verified: valid, level B-B');
});

it('revoked user at B-LT -> OCSP_REVOKED, exit 1, nothing written', async () => {
  const pdfOut = join(dir, 'revoked.pdf');
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', pdfOut, '--level', 'B-LT', '--user', 'revoked'])).toBe(1);
  expect(err.join('\n')).toMatch(/FAILED OCSP_REVOKED: .*revoked/);
  expect(existsSync(pdfOut)).toBe(false);
});

it.each([['revoked', 'OCSP_REVOKED'], ['expired', 'CERTIFICATE_EXPIRED'], ['untrusted', 'CERTIFICATE_UNTRUSTED']])('%s user at B-B -> %s before any hash is submitted, exit 1, nothing written', async (user, code) => {
  const pdfOut = join(dir, `${user}-bb.pdf`);
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', pdfOut, '--level', 'B-B', '--user', user])).toBe(1);
  expect(err.join('\n')).toMatch(new RegExp(`FAILED ${code}: .*nothing was sent for signing`));
  expect(out.join('\n')).toContain('2/8 QR scanned');
  expect(out.join('\n')).not.toContain('hash submitted');
  expect(existsSync(pdfOut)).toBe(false);
});

it('--out in a missing folder -> INVALID_INPUT naming --out BEFORE any session (no sandbox, no QR), exit 1', async () => {
  const pdfOut = join(dir, 'no-such-folder', 'out.pdf');
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', pdfOut, '--level', 'B-B'])).toBe(1);
  expect(err.join('\n')).toMatch(/FAILED INVALID_INPUT: --out: the folder ".*no-such-folder" does not exist/);
  expect(out.join('\n')).not.toContain('sandbox started');
  expect(out.join('\n')).not.toContain('1/8 session');
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', dir])).toBe(1); // a folder, not a file
  expect(err.join('\n')).toContain('INVALID_INPUT: --out:');
});

it('an encrypted input PDF -> PDF_ENCRYPTED before any session, exit 1', async () => {
  writeFileSync(join(dir, 'enc.pdf'), await fixture('encrypted'));
  expect(await main(['sign', '--in', join(dir, 'enc.pdf'), '--out', join(dir, 'enc-out.pdf'), '--level', 'B-B'])).toBe(1);
  expect(err.join('\n')).toContain('FAILED PDF_ENCRYPTED');
  expect(out.join('\n')).not.toContain('1/8 session');
  expect(existsSync(join(dir, 'enc-out.pdf'))).toBe(false);
});

it('--config with an invalid URL names the setting (not a bare "<invalid URL>")', async () => {
  const keys = await generateClientKeys();
  const base = { signApiBaseUrl: 'http://127.0.0.1:1/api/v1', clientId: 'c', signingKey: keys.signing, serviceKeySetUrl: 'not a url', listenPort: 0, trustedRoots: ['r.pem'], domainName: 'x.example.sg' };
  writeFileSync(join(dir, 'url-config.json'), JSON.stringify(base));
  expect(await main(['sign', '--config', join(dir, 'url-config.json'), '--in', join(dir, 'in.pdf'), '--out', join(dir, 'z.pdf')])).toBe(1);
  expect(err.join('\n')).toContain('INVALID_INPUT: config.serviceKeySetUrl: "not a url" is not a valid absolute URL');
  writeFileSync(join(dir, 'url-config.json'), JSON.stringify({ ...base, serviceKeySetUrl: 'https://x.example/keys.json', tsaUrl: 'ftp://tsa' }));
  expect(await main(['sign', '--config', join(dir, 'url-config.json'), '--in', join(dir, 'in.pdf'), '--out', join(dir, 'z.pdf')])).toBe(1);
  expect(err.join('\n')).toContain('INVALID_INPUT: config.tsaUrl:');
  writeFileSync(join(dir, 'url-config.json'), JSON.stringify({ ...base, serviceKeySetUrl: 'https://x.example/keys.json', signingKey: { kty: 'EC' } }));
  expect(await main(['sign', '--config', join(dir, 'url-config.json'), '--in', join(dir, 'in.pdf'), '--out', join(dir, 'z.pdf')])).toBe(1);
  expect(err.join('\n')).toContain('INVALID_INPUT: config.signingKey:');
});

it('usage errors exit 2', async () => {
  expect(await main(['sign', '--in', join(dir, 'in.pdf')])).toBe(2);
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', join(dir, 'x.pdf'), '--level', 'B-X'])).toBe(2);
  expect(await main(['sign', '--in', join(dir, 'in.pdf'), '--out', join(dir, 'x.pdf'), '--user', 'nobody'])).toBe(2);
  expect(await main(['sign', '--in', join(dir, 'missing.pdf'), '--out', join(dir, 'x.pdf')])).toBe(2);
  expect(existsSync(join(dir, 'x.pdf'))).toBe(false);
});

it('--config: the same session against a separately running service (sandbox with an automatic phone)', async () => {
  const sb = await startSandbox({ autoPhone: true, webhookRetryDelayMs: 50 });
  try {
    const keys = await generateClientKeys();
    const port = await freePort();
    sb.sign.registerClient({ clientId: 'cfg-dsap', jwksUrl: `http://127.0.0.1:${port}/jwks`, notificationUrl: `http://127.0.0.1:${port}/webhook` });
    writeFileSync(join(dir, 'cfg-root.pem'), sb.pki.root.certPem);
    const config = {
      signApiBaseUrl: sb.urls.signApi, audience: sb.urls.signBase, clientId: 'cfg-dsap', signingKey: keys.signing,
      serviceKeySetUrl: sb.urls.signKeys, listenPort: port, tsaUrl: sb.urls.tsa, trustedRoots: ['cfg-root.pem'], domainName: 'cfg.example.sg',
    };
    writeFileSync(join(dir, 'sign-config.json'), JSON.stringify(config));
    const pdfOut = join(dir, 'cfg.pdf');
    expect(await main(['sign', '--config', join(dir, 'sign-config.json'), '--in', join(dir, 'in.pdf'), '--out', pdfOut, '--level', 'B-LT'])).toBe(0);
    const log = out.join('\n');
    expect(log).toContain('scan this QR code with the Singpass app');
    expect(log).toContain('8/8 verified: valid, level B-LT');
    expect(existsSync(pdfOut)).toBe(true);
  } finally {
    await sb.close();
  }
});

it('--config with missing fields -> INVALID_INPUT naming the field, exit 1', async () => {
  writeFileSync(join(dir, 'bad-config.json'), JSON.stringify({ signApiBaseUrl: 'http://127.0.0.1:1/api/v1' }));
  expect(await main(['sign', '--config', join(dir, 'bad-config.json'), '--in', join(dir, 'in.pdf'), '--out', join(dir, 'y.pdf')])).toBe(1);
  expect(err.join('\n')).toContain('INVALID_INPUT: config.clientId');
  expect(existsSync(join(dir, 'y.pdf'))).toBe(false);
});

it('--config with an unreachable service key set fails before a session is created, exit 1, nothing written', async () => {
  const sb = await startSandbox({ autoPhone: true, webhookRetryDelayMs: 50 });
  try {
    const keys = await generateClientKeys();
    const dead = await freePort(); // nothing listens there
    writeFileSync(join(dir, 'cfg-root-dead.pem'), sb.pki.root.certPem);
    const config = {
      signApiBaseUrl: sb.urls.signApi, audience: sb.urls.signBase, clientId: 'cfg-dead', signingKey: keys.signing,
      serviceKeySetUrl: `http://127.0.0.1:${dead}/.well-known/keys.json`, listenPort: 0, trustedRoots: ['cfg-root-dead.pem'], domainName: 'cfg.example.sg',
    };
    writeFileSync(join(dir, 'dead-config.json'), JSON.stringify(config));
    const pdfOut = join(dir, 'dead.pdf');
    expect(await main(['sign', '--config', join(dir, 'dead-config.json'), '--in', join(dir, 'in.pdf'), '--out', pdfOut, '--level', 'B-B'])).toBe(1);
    expect(err.join('\n')).toMatch(/^FAILED [A-Z_]+: .*Nothing was written\.$/m);
    expect(out.join('\n')).not.toContain('1/8 session');
    expect(existsSync(pdfOut)).toBe(false);
  } finally {
    await sb.close();
  }
});
