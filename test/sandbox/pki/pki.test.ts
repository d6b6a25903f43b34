import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestPki, startPkiServer, type RunningPkiServer } from '../../../sandbox/pki';
import { writePkiFiles, type PkiFiles } from '../../helpers/pki-tools';
import { tool } from './openssl';

let srv: RunningPkiServer;
let files: PkiFiles;
let tmp: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pki-test-'));
  srv = await startPkiServer();
  files = writePkiFiles(srv.pki, path.join(tmp, 'files'));
});
afterAll(async () => {
  await srv?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const certText = async (file: string) => (await tool('openssl', ['x509', '-in', file, '-noout', '-text'])).out;

describe('certificate chain (openssl verify)', () => {
  it.each(['p256', 'p384', 'revoked', 'rsa'])('user %s chains to the root through the intermediate', async (name) => {
    const r = await tool('openssl', ['verify', '-CAfile', files.root, '-untrusted', files.intermediate, files.users[name]!.cert]);
    expect(r.out).toContain(': OK');
    expect(r.code).toBe(0);
  });

  it('the TSA certificate chains to the root', async () => {
    const r = await tool('openssl', ['verify', '-CAfile', files.root, '-untrusted', files.intermediate, files.tsa]);
    expect(r.code).toBe(0);
  });

  it('a user certificate does not verify without the intermediate', async () => {
    const r = await tool('openssl', ['verify', '-CAfile', files.root, files.users.p256!.cert]);
    expect(r.code).not.toBe(0);
  });

  it('issueUserCertificate gives a chaining certificate whose key matches', async () => {
    const u = await srv.pki.issueUserCertificate({ curve: 'P-384', commonName: 'NEW USER', serialNumber: 'S1234567D' });
    const certFile = path.join(tmp, 'new.crt');
    const keyFile = path.join(tmp, 'new.key');
    fs.writeFileSync(certFile, u.certPem);
    fs.writeFileSync(keyFile, u.privateKeyPem);
    expect((await tool('openssl', ['verify', '-CAfile', files.root, '-untrusted', files.intermediate, certFile])).code).toBe(0);
    const certPub = await tool('openssl', ['x509', '-in', certFile, '-noout', '-pubkey']);
    const keyPub = await tool('openssl', ['pkey', '-in', keyFile, '-pubout']);
    expect(certPub.out.trim()).toBe(keyPub.out.trim());
    expect(u.subject).toBe('C=SG, CN=NEW USER, serialNumber=S1234567D');
    expect(srv.pki.statusOf(u.serialHex)).toBe('good');
  });
});

describe('certificate profiles (openssl x509 -text)', () => {
  it('user: Singpass-like subject, critical DS+NR key usage, AIA to intermediate + OCSP', async () => {
    const t = await certText(files.users.p256!.cert);
    const subject = (await tool('openssl', ['x509', '-in', files.users.p256!.cert, '-noout', '-subject', '-nameopt', 'RFC2253'])).out;
    expect(subject).toMatch(/subject=serialNumber=S\d{7}[A-Z],CN=TAN AH KOW,C=SG/);
    expect(t).toMatch(/Key Usage: critical\s+Digital Signature, Non Repudiation/);
    expect(t).toMatch(/CA:FALSE/);
    expect(t).toContain(`OCSP - URI:${srv.baseUrl}/ca/ocsp`);
    expect(t).toContain(`CA Issuers - URI:${srv.baseUrl}/ca/intermediate.crt`);
    expect(t).toContain('ASN1 OID: prime256v1');
  });

  it('root: self-signed P-384 CA for ten years; intermediate: P-256 CA with AIA to the root', async () => {
    const root = await certText(files.root);
    expect(root).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
    expect(root).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(root).toContain('ASN1 OID: secp384r1');
    const dates = (await tool('openssl', ['x509', '-in', files.root, '-noout', '-enddate'])).out;
    const years = (Date.parse(dates.split('=')[1]!.trim()) - Date.now()) / (365 * 86_400_000);
    expect(years).toBeGreaterThan(9.9);
    const int = await certText(files.intermediate);
    expect(int).toMatch(/CA:TRUE, pathlen:0/);
    expect(int).toContain('ASN1 OID: prime256v1');
    expect(int).toContain(`CA Issuers - URI:${srv.baseUrl}/ca/root.crt`);
    expect(int).toContain('Signature Algorithm: ecdsa-with-SHA384');
  });

  it('TSA: critical timeStamping EKU; OCSP responders: OCSPSigning + ocsp-nocheck', async () => {
    expect(await certText(files.tsa)).toMatch(/Extended Key Usage: critical\s+Time Stamping/);
    for (const f of [files.ocspRoot, files.ocspIntermediate]) {
      const t = await certText(f);
      expect(t).toMatch(/Extended Key Usage:\s+OCSP Signing/);
      expect(t).toContain('OCSP No Check');
    }
  });

  it('validity starts a day back and lasts two years for leaves', async () => {
    const d = (await tool('openssl', ['x509', '-in', files.users.p384!.cert, '-noout', '-startdate', '-enddate'])).out;
    const start = Date.parse(/notBefore=(.*)/.exec(d)![1]!);
    const end = Date.parse(/notAfter=(.*)/.exec(d)![1]!);
    expect(Date.now() - start).toBeGreaterThan(86_000_000);
    expect((end - Date.now()) / (365 * 86_400_000)).toBeCloseTo(2, 1);
  });
});

describe('certificate download', () => {
  it.each([
    ['root.crt', () => srv.pki.root.certDer],
    ['intermediate.crt', () => srv.pki.intermediate.certDer],
    ['tsa.crt', () => srv.pki.tsa.certDer],
  ])('GET /ca/%s serves the DER as application/pkix-cert', async (name, der) => {
    const res = await fetch(`${srv.baseUrl}/ca/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pkix-cert');
    expect(Buffer.from(await res.arrayBuffer()).equals(der())).toBe(true);
  });
});

describe('createTestPki', () => {
  it('marks users.revoked revoked at creation and the others good', () => {
    expect(srv.pki.statusOf(srv.pki.users.revoked.serialHex)).toBe('revoked');
    expect(srv.pki.lookup(srv.pki.users.revoked.serialHex)?.reason).toBe('keyCompromise');
    expect(srv.pki.statusOf(srv.pki.users.p256.serialHex)).toBe('good');
    expect(srv.pki.statusOf('0a0b0c')).toBe('unknown');
  });

  it('normalizes serial spelling (case, leading zeros, colons)', () => {
    const s = srv.pki.users.p384.serialHex;
    expect(srv.pki.statusOf('00' + s.toUpperCase())).toBe('good');
    expect(srv.pki.statusOf(s.match(/../g)!.join(':'))).toBe('good');
  });

  it('refuses a subject serialNumber that is not a PrintableString', async () => {
    await expect(srv.pki.issueUserCertificate({ curve: 'P-256', commonName: 'X', serialNumber: 'S123_4567D' })).rejects.toThrow(/PrintableString/);
  });

  it('refuses to revoke a serial it never issued', () => {
    expect(() => srv.pki.revoke('0badbeef')).toThrow(/not issued/);
  });

  it('uses an ocspUrl override in AIA', async () => {
    const pki = await createTestPki({ baseUrl: 'http://127.0.0.1:9', ocspUrl: 'http://127.0.0.1:8/elsewhere', rsaUser: false });
    const f = writePkiFiles(pki, path.join(tmp, 'override'));
    const t = await certText(f.users.p256!.cert);
    expect(t).toContain('OCSP - URI:http://127.0.0.1:8/elsewhere');
    expect(t).toContain('CA Issuers - URI:http://127.0.0.1:9/ca/intermediate.crt');
    expect(pki.users.rsa).toBeUndefined();
  });
});
