import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startPkiServer, type RunningPkiServer } from '../../../sandbox/pki';
import { writePkiFiles, type PkiFiles } from '../../helpers/pki-tools';
import { tool } from './openssl';

let srv: RunningPkiServer;
let files: PkiFiles;
let tmp: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pki-ocsp-'));
  srv = await startPkiServer();
  files = writePkiFiles(srv.pki, path.join(tmp, 'files'));
});
afterAll(async () => {
  srv?.service.setOcspDelay(0);
  await srv?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** `openssl ocsp` against our responder; returns its combined output. */
async function ask(args: string[]): Promise<string> {
  const r = await tool('openssl', ['ocsp', '-url', `${srv.baseUrl}/ca/ocsp`, '-CAfile', files.root, '-resp_text', ...args]);
  return r.out;
}

describe('OCSP responder (checked with openssl ocsp)', () => {
  it('answers good for a valid user certificate, signed by the delegated responder, nonce echoed', async () => {
    const out = await ask(['-issuer', files.intermediate, '-cert', files.users.p256!.cert]);
    expect(out).toContain('Response verify OK');
    expect(out).toMatch(/: good/);
    expect(out).toMatch(/Response Extensions:\s+OCSP Nonce:/);
    expect(out).not.toContain('WARNING'); // openssl warns on a missing or mismatched nonce
    expect(out).toContain('Singpass Flows Sandbox Signing CA OCSP Responder');
    expect(out).toMatch(/Next Update:/);
  });

  it('answers revoked with time and reason for users.revoked', async () => {
    const out = await ask(['-issuer', files.intermediate, '-cert', files.users.revoked!.cert]);
    expect(out).toContain('Response verify OK');
    expect(out).toMatch(/: revoked/);
    expect(out).toMatch(/Revocation Time: /);
    expect(out).toMatch(/Reason: keyCompromise/);
  });

  it('answers unknown for a serial the CA never issued', async () => {
    const out = await ask(['-issuer', files.intermediate, '-serial', '0x0123456789abcdef']);
    expect(out).toContain('Response verify OK');
    expect(out).toMatch(/0x0123456789abcdef: unknown|: unknown/);
  });

  it('follows revocations made after issuance', async () => {
    const u = await srv.pki.issueUserCertificate({ curve: 'P-256', commonName: 'SOON REVOKED' });
    const f = path.join(tmp, 'soon.crt');
    fs.writeFileSync(f, u.certPem);
    expect(await ask(['-issuer', files.intermediate, '-cert', f])).toMatch(/: good/);
    srv.pki.revoke(u.serialHex, 'superseded');
    const out = await ask(['-issuer', files.intermediate, '-cert', f]);
    expect(out).toMatch(/: revoked/);
    expect(out).toMatch(/Reason: superseded/);
  });

  it('answers for the root CA (intermediate status) through the root responder', async () => {
    const out = await ask(['-issuer', files.root, '-cert', files.intermediate]);
    expect(out).toContain('Response verify OK');
    expect(out).toMatch(/: good/);
    expect(out).toContain('Singpass Flows Sandbox Root CA OCSP Responder');
  });

  it('accepts SHA-256 CertIDs and several certificates in one request', async () => {
    const out = await ask(['-sha256', '-issuer', files.intermediate, '-cert', files.users.p384!.cert, '-cert', files.users.revoked!.cert]);
    expect(out).toContain('Response verify OK');
    expect(out).toMatch(/Hash Algorithm: sha256/);
    expect(out).toMatch(/: good/);
    expect(out).toMatch(/: revoked/);
  });

  it('serves GET /ca/ocsp/<base64> (RFC 6960 A.1)', async () => {
    const req = path.join(tmp, 'get-req.der');
    await tool('openssl', ['ocsp', '-issuer', files.intermediate, '-cert', files.users.p256!.cert, '-no_nonce', '-reqout', req]);
    const b64 = encodeURIComponent(fs.readFileSync(req).toString('base64'));
    const res = await fetch(`${srv.baseUrl}/ca/ocsp/${b64}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/ocsp-response');
    const resp = path.join(tmp, 'get-resp.der');
    fs.writeFileSync(resp, Buffer.from(await res.arrayBuffer()));
    const r = await tool('openssl', ['ocsp', '-respin', resp, '-CAfile', files.root, '-issuer', files.intermediate, '-cert', files.users.p256!.cert]);
    expect(r.out).toContain('Response verify OK');
    expect(r.out).toMatch(/: good/);
  });

  it('answers malformedRequest to a request with more than 20 CertIDs', async () => {
    const serials = Array.from({ length: 21 }, (_, i) => ['-serial', `0x${(0x1000 + i).toString(16)}`]).flat();
    const ok = await ask(['-issuer', files.intermediate, ...serials.slice(0, 40)]);
    expect(ok).toContain('Response verify OK');
    const tooMany = await ask(['-issuer', files.intermediate, ...serials]);
    expect(tooMany).toMatch(/malformedrequest \(1\)/i);
  });

  it('answers malformedRequest to garbage', async () => {
    const res = await fetch(`${srv.baseUrl}/ca/ocsp`, {
      method: 'POST', headers: { 'content-type': 'application/ocsp-request' }, body: Buffer.from('not an OCSP request'),
    });
    expect(res.status).toBe(200);
    const resp = path.join(tmp, 'bad-resp.der');
    fs.writeFileSync(resp, Buffer.from(await res.arrayBuffer()));
    const r = await tool('openssl', ['ocsp', '-respin', resp, '-resp_text', '-noverify']);
    expect(r.out).toMatch(/malformedrequest \(1\)/i);
  });
});

describe('OCSP fault switches', () => {
  it('setOcspDown makes the responder answer 503 until switched back', async () => {
    const req = path.join(tmp, 'down-req.der');
    await tool('openssl', ['ocsp', '-issuer', files.intermediate, '-cert', files.users.p256!.cert, '-reqout', req]);
    const post = () => fetch(`${srv.baseUrl}/ca/ocsp`, { method: 'POST', headers: { 'content-type': 'application/ocsp-request' }, body: fs.readFileSync(req) });
    srv.service.setOcspDown(true);
    try {
      expect((await post()).status).toBe(503);
    } finally {
      srv.service.setOcspDown(false);
    }
    expect((await post()).status).toBe(200);
  });

  it('setOcspDelay delays answers', async () => {
    const req = path.join(tmp, 'delay-req.der');
    await tool('openssl', ['ocsp', '-issuer', files.intermediate, '-cert', files.users.p256!.cert, '-reqout', req]);
    srv.service.setOcspDelay(400);
    const t0 = Date.now();
    const res = await fetch(`${srv.baseUrl}/ca/ocsp`, { method: 'POST', body: fs.readFileSync(req) });
    const elapsed = Date.now() - t0;
    srv.service.setOcspDelay(0);
    expect(res.status).toBe(200);
    expect(elapsed).toBeGreaterThanOrEqual(390);
  });
});
