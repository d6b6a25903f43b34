import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestPki, startPkiServer, type RunningPkiServer, type TestPki } from '../../../sandbox/pki';
import { makeNssDb, opensslIndex, startOpensslOcspResponder, writePkiFiles, type OpensslOcspResponder } from '../../helpers/pki-tools';
import { tool } from './openssl';

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pki-persist-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('persistence (dir)', () => {
  let first: TestPki;
  const dir = () => path.join(tmp, 'state');

  beforeAll(async () => {
    first = await createTestPki({ baseUrl: 'http://127.0.0.1:1111', dir: dir(), rsaUser: false });
  });

  it('reloads the same hierarchy and keeps revocations made later', async () => {
    const extra = await first.issueUserCertificate({ curve: 'P-256', commonName: 'LATER REVOKED' });
    first.revoke(extra.serialHex, 'cessationOfOperation');
    const again = await createTestPki({ baseUrl: 'http://127.0.0.1:1111', dir: dir(), rsaUser: false });
    expect(again.root.certDer.equals(first.root.certDer)).toBe(true);
    expect(again.intermediate.certDer.equals(first.intermediate.certDer)).toBe(true);
    expect(again.users.p256.certDer.equals(first.users.p256.certDer)).toBe(true);
    expect(again.statusOf(extra.serialHex)).toBe('revoked');
    expect(again.lookup(extra.serialHex)?.reason).toBe('cessationOfOperation');
    expect(again.statusOf(first.users.revoked.serialHex)).toBe('revoked');
    expect(again.statusOf(first.users.p256.serialHex)).toBe('good');
  });

  it('on a new port keeps the root and revocations and re-issues the rest with live AIA URLs', async () => {
    const moved = await createTestPki({ baseUrl: 'http://127.0.0.1:2222', dir: dir(), rsaUser: false });
    expect(moved.root.certDer.equals(first.root.certDer)).toBe(true);
    expect(moved.intermediate.serialHex).not.toBe(first.intermediate.serialHex);
    // Same intermediate key: OCSP CertIDs of certificates issued before the move still name this CA.
    expect(moved.intermediate.privateKeyPem).toBe(first.intermediate.privateKeyPem);
    expect(moved.statusOf(first.users.revoked.serialHex)).toBe('revoked');
    expect(moved.statusOf(moved.users.revoked.serialHex)).toBe('revoked');
    const f = writePkiFiles(moved, path.join(tmp, 'moved'));
    const text = (await tool('openssl', ['x509', '-in', f.users.p256!.cert, '-noout', '-ext', 'authorityInfoAccess'])).out;
    expect(text).toContain('http://127.0.0.1:2222/ca/ocsp');
    // A certificate issued before the move still chains to the re-issued intermediate (same name and key).
    const old = path.join(tmp, 'old-user.crt');
    fs.writeFileSync(old, first.users.p256.certPem);
    expect((await tool('openssl', ['verify', '-CAfile', f.root, '-untrusted', f.intermediate, old])).code).toBe(0);
  });

  it('refuses a corrupt state file with an actionable message', async () => {
    const bad = path.join(tmp, 'corrupt');
    fs.mkdirSync(bad);
    fs.writeFileSync(path.join(bad, 'pki-state.json'), '{ not json');
    await expect(createTestPki({ baseUrl: 'http://127.0.0.1:1', dir: bad })).rejects.toThrow(/delete it to start a fresh test PKI/);
  });

  it('does not store state world-readable', () => {
    const mode = fs.statSync(path.join(dir(), 'pki-state.json')).mode & 0o777;
    expect(mode & 0o077).toBe(0);
  });
});

describe('startPkiServer with dir', () => {
  it('serves the persisted root after a restart and answers OCSP for old revocations', async () => {
    const d = path.join(tmp, 'server-state');
    const s1 = await startPkiServer({ dir: d });
    const rootDer = s1.pki.root.certDer;
    const revokedPem = s1.pki.users.revoked.certPem;
    await s1.close();
    const s2: RunningPkiServer = await startPkiServer({ dir: d });
    try {
      const res = await fetch(`${s2.baseUrl}/ca/root.crt`);
      expect(Buffer.from(await res.arrayBuffer()).equals(rootDer)).toBe(true);
      const f = writePkiFiles(s2.pki, path.join(tmp, 's2'));
      const old = path.join(tmp, 's1-revoked.crt');
      fs.writeFileSync(old, revokedPem);
      const out = (await tool('openssl', ['ocsp', '-url', `${s2.baseUrl}/ca/ocsp`, '-CAfile', f.root, '-issuer', f.intermediate, '-cert', old])).out;
      expect(out).toContain('Response verify OK');
      expect(out).toMatch(/: revoked/);
    } finally {
      await s2.close();
    }
  });
});

describe('OpenSSL OCSP responder wrapper', () => {
  let ossl: OpensslOcspResponder;
  let pki: TestPki;
  afterAll(async () => ossl?.close());

  it('answers openssl ocsp -url for certificates whose AIA points at it', async () => {
    ossl = await startOpensslOcspResponder(undefined, path.join(tmp, 'ossl'));
    pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', ocspUrl: ossl.url, rsaUser: false });
    ossl.setPki(pki);
    const f = writePkiFiles(pki, path.join(tmp, 'ossl-files'));
    const aia = (await tool('openssl', ['x509', '-in', f.users.p256!.cert, '-noout', '-ocsp_uri'])).out.trim();
    expect(aia).toBe(ossl.url);
    const good = (await tool('openssl', ['ocsp', '-url', aia, '-CAfile', f.root, '-issuer', f.intermediate, '-cert', f.users.p256!.cert])).out;
    expect(good).toContain('Response verify OK');
    expect(good).toMatch(/: good/);
    const revoked = (await tool('openssl', ['ocsp', '-url', aia, '-CAfile', f.root, '-issuer', f.intermediate, '-cert', f.users.revoked!.cert])).out;
    expect(revoked).toMatch(/: revoked/);
    expect(revoked).toMatch(/Reason: keyCompromise/);
    expect(ossl.requests).toBe(2);
  });

  it('builds index.txt lines OpenSSL understands', () => {
    const lines = opensslIndex(pki).trim().split('\n');
    const revokedLine = lines.find((l) => l.includes(pki.users.revoked.serialHex.toUpperCase()));
    expect(revokedLine).toMatch(/^R\t\d{12}Z\t\d{12}Z,keyCompromise\t[0-9A-F]+\tunknown\t\/C=SG\/CN=REVOKED TEST USER/);
  });
});

describe('makeNssDb', () => {
  it('creates an NSS database trusting the root as CA (CT,C,C)', async () => {
    const pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', rsaUser: false });
    const db = await makeNssDb(path.join(tmp, 'nss'), pki.root.certPem);
    const list = (await tool('certutil', ['-L', '-d', `sql:${db}`])).out;
    expect(list).toMatch(/Singpass Flows Sandbox Root CA\s+CT,C,C/);
  });
});
