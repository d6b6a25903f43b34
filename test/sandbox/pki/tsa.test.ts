import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startPkiServer, type RunningPkiServer } from '../../../sandbox/pki';
import { writePkiFiles, type PkiFiles } from '../../helpers/pki-tools';
import { tool } from './openssl';

let srv: RunningPkiServer;
let files: PkiFiles;
let tmp: string;
let data: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pki-tsa-'));
  srv = await startPkiServer();
  files = writePkiFiles(srv.pki, path.join(tmp, 'files'));
  data = path.join(tmp, 'data.bin');
  fs.writeFileSync(data, 'the bytes a signature covers');
});
afterAll(async () => {
  await srv?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function stamp(query: Buffer): Promise<Response> {
  return fetch(`${srv.baseUrl}/ca/tsa`, { method: 'POST', headers: { 'content-type': 'application/timestamp-query' }, body: new Uint8Array(query) });
}

async function queryAndReply(name: string, queryArgs: string[]) {
  const q = path.join(tmp, `${name}.tsq`);
  const r = path.join(tmp, `${name}.tsr`);
  const made = await tool('openssl', ['ts', '-query', ...queryArgs, '-out', q]);
  expect(made.code).toBe(0);
  const res = await stamp(fs.readFileSync(q));
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/timestamp-reply');
  fs.writeFileSync(r, Buffer.from(await res.arrayBuffer()));
  return { q, r };
}

describe('TSA (checked with openssl ts)', () => {
  it.each(['-sha256', '-sha384', '-sha512'])('grants %s imprints; openssl ts -verify says OK', async (alg) => {
    const { q, r } = await queryAndReply(`ok${alg}`, ['-data', data, alg, '-cert']);
    const v = await tool('openssl', ['ts', '-verify', '-in', r, '-queryfile', q, '-CAfile', files.root, '-untrusted', files.intermediate]);
    expect(v.out).toContain('Verification: OK');
    const text = (await tool('openssl', ['ts', '-reply', '-in', r, '-text'])).out;
    expect(text).toContain('Status: Granted.');
    expect(text).toContain(`Policy OID: ${srv.pki.tsaPolicy}`);
    expect(text).toContain(`Hash Algorithm: ${alg.slice(1)}`);
  });

  it('echoes the nonce and verifies against the data itself', async () => {
    const { q, r } = await queryAndReply('nonce', ['-data', data, '-sha256', '-cert']);
    const qNonce = /Nonce: (0x[0-9A-F]+)/.exec((await tool('openssl', ['ts', '-query', '-in', q, '-text'])).out)?.[1];
    const rNonce = /Nonce: (0x[0-9A-F]+)/.exec((await tool('openssl', ['ts', '-reply', '-in', r, '-text'])).out)?.[1];
    expect(qNonce).toBeDefined();
    expect(rNonce).toBe(qNonce);
    const v = await tool('openssl', ['ts', '-verify', '-in', r, '-data', data, '-CAfile', files.root, '-untrusted', files.intermediate]);
    expect(v.out).toContain('Verification: OK');
    const other = path.join(tmp, 'other.bin');
    fs.writeFileSync(other, 'different bytes');
    const bad = await tool('openssl', ['ts', '-verify', '-in', r, '-data', other, '-CAfile', files.root, '-untrusted', files.intermediate]);
    expect(bad.out).not.toContain('Verification: OK');
  });

  it('includes the TSA certificate only when certReq is set', async () => {
    const without = await queryAndReply('nocert', ['-data', data, '-sha256']);
    const noCert = await tool('openssl', ['ts', '-verify', '-in', without.r, '-queryfile', without.q, '-CAfile', files.root, '-untrusted', files.intermediate]);
    expect(noCert.out).not.toContain('Verification: OK');
    // With the TSA certificate supplied out of band, the same token verifies.
    const bundle = path.join(tmp, 'bundle.pem');
    fs.writeFileSync(bundle, srv.pki.intermediate.certPem + srv.pki.tsa.certPem);
    const ok = await tool('openssl', ['ts', '-verify', '-in', without.r, '-queryfile', without.q, '-CAfile', files.root, '-untrusted', bundle]);
    expect(ok.out).toContain('Verification: OK');
  });

  it('rejects a SHA-1 imprint (badAlg)', async () => {
    const { r } = await queryAndReply('sha1', ['-data', data, '-sha1', '-cert']);
    const text = (await tool('openssl', ['ts', '-reply', '-in', r, '-text'])).out;
    expect(text).toContain('Status: Rejected.');
    expect(text).toMatch(/Failure info:\s*unrecognized or unsupported algorithm identifier/);
  });

  it('rejects an unknown requested policy (unacceptedPolicy)', async () => {
    const { r } = await queryAndReply('policy', ['-data', data, '-sha256', '-tspolicy', '1.2.3.4']);
    const text = (await tool('openssl', ['ts', '-reply', '-in', r, '-text'])).out;
    expect(text).toContain('Status: Rejected.');
    expect(text).toMatch(/requested TSA policy is not supported/);
  });

  it('rejects garbage with a rejection status, not an HTTP error', async () => {
    const res = await stamp(Buffer.from('hello'));
    expect(res.status).toBe(200);
    const r = path.join(tmp, 'garbage.tsr');
    fs.writeFileSync(r, Buffer.from(await res.arrayBuffer()));
    const text = (await tool('openssl', ['ts', '-reply', '-in', r, '-text'])).out;
    expect(text).toContain('Status: Rejected.');
  });

  it('setTsaDown makes the TSA answer 503', async () => {
    const q = path.join(tmp, 'down.tsq');
    await tool('openssl', ['ts', '-query', '-data', data, '-sha256', '-out', q]);
    srv.service.setTsaDown(true);
    try {
      expect((await stamp(fs.readFileSync(q))).status).toBe(503);
    } finally {
      srv.service.setTsaDown(false);
    }
    expect((await stamp(fs.readFileSync(q))).status).toBe(200);
  });
});
