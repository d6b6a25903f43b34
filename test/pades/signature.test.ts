import * as fs from 'node:fs';
import * as path from 'node:path';
import { isSingpassFlowsError } from '../../src/errors';
import { finalizeSignature, listSignatures, prepareSignature } from '../../src/pades';
import { fixture, SIGNABLE_FIXTURES, SYSTEM_PDFS } from '../fixtures/pdfs';
import { extractSignatures, opensslCmsVerify, pdfsig, phoneSign, qpdfCheck, signPdf, stopPki, testPki, tmpDir } from './helpers';

const dir = tmpDir('sig');
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await stopPki();
});

function write(name: string, bytes: Buffer): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, bytes);
  return f;
}

describe.each(SIGNABLE_FIXTURES)('signing the %s fixture', (name) => {
  let original: Buffer;
  let signed: Buffer;
  let file: string;
  beforeAll(async () => {
    original = await fixture(name);
    const pki = await testPki();
    signed = await signPdf(original, pki.users.p256, { reason: 'Approved' });
    file = write(`${name}.pdf`, signed);
  });

  test('keeps the original bytes as a prefix (append-only)', () => {
    expect(signed.length).toBeGreaterThan(original.length);
    expect(signed.subarray(0, original.length).equals(original)).toBe(true);
  });

  test('qpdf --check finds no problems', async () => {
    const out = await qpdfCheck(file);
    expect(out).toContain('No syntax or stream encoding errors found');
    expect(out).not.toMatch(/WARNING|EXIT/);
  });

  test('pdfsig reports a valid signature from a trusted certificate', async () => {
    const out = await pdfsig(file);
    expect(out).toContain('Signature is Valid.');
    expect(out).toContain('Certificate is Trusted.');
    expect(out).toContain('ETSI.CAdES.detached');
    expect(out).toContain('Total document signed');
  });

  test('openssl cms -verify accepts the CMS over the ByteRange bytes', async () => {
    const sigs = extractSignatures(signed);
    expect(sigs).toHaveLength(1);
    const [ok, out] = await opensslCmsVerify(sigs[0]!, dir);
    expect(out).toContain('Verification successful');
    expect(ok).toBe(true);
  });

  test('listSignatures finds the new field', () => {
    const list = listSignatures(signed);
    expect(list.map((s) => [s.type, s.subFilter, s.coversWholeDocument, s.reason])).toEqual([
      ['signature', 'ETSI.CAdES.detached', true, 'Approved'],
    ]);
    expect(list[0]!.fieldName).toBe('Signature1' === list[0]!.fieldName ? 'Signature1' : 'Signature2');
  });
});

describe('tampering', () => {
  test('changing one covered byte breaks pdfsig and openssl', async () => {
    const pki = await testPki();
    const signed = await signPdf(await fixture('classic'), pki.users.p256);
    const tampered = Buffer.from(signed);
    const at = tampered.indexOf('Fixture page 1', 0, 'latin1');
    // the page text lives in a (possibly compressed) stream; flip a byte inside the first object instead when absent
    const pos = at >= 0 ? at : 20;
    tampered[pos] = tampered[pos]! ^ 0x01;
    const out = await pdfsig(write('tampered.pdf', tampered));
    expect(out).toContain('Digest Mismatch');
    const [ok] = await opensslCmsVerify(extractSignatures(tampered)[0]!, dir);
    expect(ok).toBe(false);
  });
});

test('state survives a JSON round trip', async () => {
  const pki = await testPki();
  const pdf = await fixture('classic');
  const { documentHash, state } = await prepareSignature(pdf, { certificate: pki.users.p256.certPem });
  const restored = JSON.parse(JSON.stringify(state));
  expect(JSON.stringify(state).length).toBeLessThan(12_000);
  const signed = await finalizeSignature(pdf, restored, phoneSign(restored, pki.users.p256, documentHash));
  expect(await pdfsig(write('roundtrip.pdf', signed))).toContain('Signature is Valid.');
});

test('a wrong signature is refused with SIGNATURE_INVALID', async () => {
  const pki = await testPki();
  const pdf = await fixture('classic');
  const a = await prepareSignature(pdf, { certificate: pki.users.p256.certDer });
  const other = await prepareSignature(pdf, { certificate: pki.users.p256.certDer, reason: 'other' });
  const sigForOther = phoneSign(other.state, pki.users.p256);
  await expect(finalizeSignature(pdf, a.state, sigForOther)).rejects.toMatchObject({ code: 'SIGNATURE_INVALID' });
  // signature by a different key over the right attributes
  const byP384 = phoneSign(a.state, pki.users.p384);
  await expect(finalizeSignature(pdf, a.state, byP384)).rejects.toMatchObject({ code: 'SIGNATURE_INVALID' });
});

test('not the prepared PDF → STATE_INVALID', async () => {
  const pki = await testPki();
  const pdf = await fixture('classic');
  const { state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer });
  const sig = phoneSign(state, pki.users.p256);
  const other = Buffer.from(pdf);
  other[100] = other[100]! ^ 1;
  await expect(finalizeSignature(other, state, sig)).rejects.toMatchObject({ code: 'STATE_INVALID' });
  const altered = { ...state, update: { ...state.update, tail: Buffer.from('x').toString('base64') } };
  await expect(finalizeSignature(pdf, altered, sig)).rejects.toMatchObject({ code: 'STATE_INVALID' });
  await expect(finalizeSignature(pdf, { ...state, signedAttributes: 'AAAA' }, sig)).rejects.toMatchObject({ code: 'STATE_INVALID' });
  await expect(finalizeSignature(pdf, { ...state, documentHash: '00'.repeat(32) }, sig)).rejects.toMatchObject({ code: 'STATE_INVALID' });
  await expect(finalizeSignature(pdf, { ...state, format: 'x' } as never, sig)).rejects.toMatchObject({ code: 'STATE_INVALID' });
  await expect(finalizeSignature(pdf, null as never, sig)).rejects.toMatchObject({ code: 'STATE_INVALID' });
});

test('raw r||s signatures are accepted (P-256 and P-384)', async () => {
  const pki = await testPki();
  const pdf = await fixture('classic');
  for (const [user, size] of [[pki.users.p256, 64], [pki.users.p384, 96]] as const) {
    const { state } = await prepareSignature(pdf, { certificate: user.certDer, chain: [pki.intermediate.certDer] });
    const attrs = Buffer.from(state.signedAttributes, 'base64');
    const raw = require('node:crypto').sign('sha256', attrs, { key: user.privateKey, dsaEncoding: 'ieee-p1363' }) as Buffer;
    expect(raw.length).toBe(size);
    const signed = await finalizeSignature(pdf, state, raw.toString('hex'));
    expect(await pdfsig(write(`raw-${size}.pdf`, signed))).toContain('Signature is Valid.');
  }
});

test('P-521 signer (self-issued via openssl): raw 132-byte r||s accepted, openssl verifies', async () => {
  const { execFileSync } = require('node:child_process');
  const key = path.join(dir, 'p521.key');
  const cert = path.join(dir, 'p521.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-521', '-nodes', '-keyout', key, '-out', cert, '-subj', '/CN=P521 Signer', '-days', '2', '-addext', 'keyUsage=critical,digitalSignature,nonRepudiation'], { stdio: 'pipe' });
  const crypto = require('node:crypto');
  const pdf = await fixture('classic');
  const { documentHash, state } = await prepareSignature(pdf, { certificate: fs.readFileSync(cert, 'utf8') });
  expect(state.documentHash).toBe(documentHash);
  const raw = crypto.sign('sha256', Buffer.from(state.signedAttributes, 'base64'), { key: fs.readFileSync(key), dsaEncoding: 'ieee-p1363' });
  expect(raw.length).toBe(132);
  const signed = await finalizeSignature(pdf, state, raw);
  const sig = extractSignatures(signed)[0]!;
  const p7s = write('p521.p7s', sig.cms);
  const content = write('p521.bin', sig.signed);
  const r = require('node:child_process').spawnSync('openssl', ['cms', '-verify', '-binary', '-inform', 'DER', '-in', p7s, '-content', content, '-CAfile', cert, '-purpose', 'any', '-out', '/dev/null']);
  expect([r.status, r.stderr.toString()]).toEqual([0, expect.stringContaining('Verification successful')]);
});

test.each(['p384', 'rsa'] as const)('%s signer: pdfsig and openssl accept it', async (kind) => {
  const pki = await testPki();
  const user = pki.users[kind]!;
  const signed = await signPdf(await fixture('xrefStream'), user);
  expect(await pdfsig(write(`${kind}.pdf`, signed))).toContain('Signature is Valid.');
  const [ok, out] = await opensslCmsVerify(extractSignatures(signed)[0]!, dir);
  expect([ok, out]).toEqual([true, expect.stringContaining('Verification successful')]);
});

test('signing twice keeps the first signature valid', async () => {
  const pki = await testPki();
  const once = await signPdf(await fixture('xrefStream'), pki.users.p256);
  const twice = await signPdf(once, pki.users.p384, { fieldName: 'Approver' });
  expect(twice.subarray(0, once.length).equals(once)).toBe(true);
  const out = await pdfsig(write('twice.pdf', twice));
  expect(out.match(/Signature is Valid\./g)).toHaveLength(2);
  expect(out).toContain('Signature #1');
  expect(out).toContain('Signature #2');
  expect(listSignatures(twice).map((s) => [s.fieldName, s.coversWholeDocument])).toEqual([
    ['Signature1', false],
    ['Approver', true],
  ]);
  expect((await qpdfCheck(write('twice-q.pdf', twice)))).toContain('No syntax or stream encoding errors found');
  for (const s of extractSignatures(twice)) expect((await opensslCmsVerify(s, dir))[0]).toBe(true);
});

test('a visible appearance renders on the chosen page', async () => {
  const pki = await testPki();
  const signed = await signPdf(await fixture('classic'), pki.users.p256, {
    appearance: { page: 2, rect: [50, 50, 300, 120] },
    name: 'Tan Ah Kow',
    reason: 'Agreed',
  });
  const file = write('visible.pdf', signed);
  expect(await pdfsig(file)).toContain('Signature is Valid.');
  expect(await qpdfCheck(file)).toContain('No syntax or stream encoding errors found');
  const { execFileSync } = require('node:child_process');
  const text = execFileSync('pdftotext', ['-f', '2', '-l', '2', file, '-']).toString();
  expect(text).toContain('Tan Ah Kow\nSigned with Singpass');
  expect(text).toContain('Reason: Agreed');
});

describe('refusals', () => {
  test('encrypted → PDF_ENCRYPTED', async () => {
    const pki = await testPki();
    await expect(prepareSignature(await fixture('encrypted'), { certificate: pki.users.p256.certDer })).rejects.toMatchObject({ code: 'PDF_ENCRYPTED' });
  });
  test('DocMDP P=1 → PDF_CERTIFIED_NO_CHANGES', async () => {
    const pki = await testPki();
    await expect(prepareSignature(await fixture('certifiedNoChanges'), { certificate: pki.users.p256.certDer })).rejects.toMatchObject({
      code: 'PDF_CERTIFIED_NO_CHANGES',
    });
  });
  test('garbage → PDF_INVALID', async () => {
    const pki = await testPki();
    for (const junk of [Buffer.from('hello world, definitely not a PDF file at all'), Buffer.alloc(5000, 0x41), Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(4000, 0x20), Buffer.from('startxref\n99999999\n%%EOF')])]) {
      const err = await prepareSignature(junk, { certificate: pki.users.p256.certDer }).catch((e) => e);
      expect(isSingpassFlowsError(err, 'PDF_INVALID')).toBe(true);
    }
  });
  test('existing field name → PDF_FIELD_EXISTS; default name skips taken ones', async () => {
    const pki = await testPki();
    const pdf = await fixture('acroform');
    await expect(prepareSignature(pdf, { certificate: pki.users.p256.certDer, fieldName: 'Signature1' })).rejects.toMatchObject({ code: 'PDF_FIELD_EXISTS' });
    await expect(prepareSignature(pdf, { certificate: pki.users.p256.certDer, fieldName: 'applicant' })).rejects.toMatchObject({ code: 'PDF_FIELD_EXISTS' });
    const { state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer });
    expect(state.fieldName).toBe('Signature2');
  });
  test('placeholder too small → PDF_PLACEHOLDER_TOO_SMALL', async () => {
    const pki = await testPki();
    const pdf = await fixture('classic');
    const { state } = await prepareSignature(pdf, { certificate: pki.users.rsa!.certDer, chain: [pki.intermediate.certDer, pki.root.certDer], placeholderBytes: 2048 });
    await expect(finalizeSignature(pdf, state, phoneSign(state, pki.users.rsa!))).rejects.toMatchObject({ code: 'PDF_PLACEHOLDER_TOO_SMALL' });
  });
  test('appearance outside the page or on a missing page → INVALID_INPUT naming the field', async () => {
    const pki = await testPki();
    const pdf = await fixture('classic');
    await expect(prepareSignature(pdf, { certificate: pki.users.p256.certDer, appearance: { rect: [700, 900, 800, 950] } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'appearance.rect' },
    });
    await expect(prepareSignature(pdf, { certificate: pki.users.p256.certDer, appearance: { page: 3, rect: [10, 10, 100, 50] } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'appearance.page' },
    });
    await expect(prepareSignature(pdf, { certificate: pki.users.p256.certDer, appearance: { rect: [10, 10, 12, 12] } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      details: { field: 'appearance.rect' },
    });
  });
  test('bad certificate and signature inputs → INVALID_INPUT', async () => {
    const pdf = await fixture('classic');
    await expect(prepareSignature(pdf, { certificate: 'not-a-cert!' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'certificate' } });
    await expect(prepareSignature(pdf, { certificate: Buffer.from('3003020101', 'hex') })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    const pki = await testPki();
    const { state } = await prepareSignature(pdf, { certificate: pki.users.p256.certDer });
    await expect(finalizeSignature(pdf, state, 'zz')).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'signature' } });
  });
});

// Real-world files (pdfTeX, xref streams with predictors) when the machine has them.
const systemPdfs = SYSTEM_PDFS.length ? SYSTEM_PDFS : ['(none on this machine)'];
test.each(systemPdfs)('signs %s visibly: pdfsig valid, qpdf clean', async (file) => {
  if (!fs.existsSync(file)) return; // listed only when present; see SYSTEM_PDFS
  const pki = await testPki();
  const signed = await signPdf(fs.readFileSync(file), pki.users.p256, { appearance: { rect: [20, 20, 220, 70] } });
  const out = write(`system-${path.basename(file)}`, signed);
  expect(await pdfsig(out)).toContain('Signature is Valid.');
  expect(await qpdfCheck(out)).toContain('No syntax or stream encoding errors found');
});

describe('filling an existing empty signature field', () => {
  test.each([
    ['Sign here', 1],
    ['Witness', 2],
  ])('"%s" (page %d) is signed in place, visibly, and cannot be signed twice', async (fieldName, page) => {
    const pki = await testPki();
    const pdf = await fixture('emptySignatureFields');
    const signed = await signPdf(pdf, pki.users.p256, { fieldName, name: 'Tan Ah Kow' });
    const file = write(`filled-${page}.pdf`, signed);
    const report = await pdfsig(file);
    expect(report).toContain(`Signature Field Name: ${fieldName}`);
    expect(report).toContain('Signature is Valid.');
    expect(await qpdfCheck(file)).toContain('No syntax or stream encoding errors found');
    const { execFileSync } = require('node:child_process');
    expect(execFileSync('pdftotext', ['-f', String(page), '-l', String(page), file, '-']).toString()).toContain('Tan Ah Kow\nSigned with Singpass');
    // no new field was added
    const json = JSON.parse(execFileSync('qpdf', ['--json', '--json-key=acroform', file]).toString());
    expect(json.acroform.fields.map((f: { fullname: string }) => f.fullname).sort()).toEqual(['Sign here', 'Witness']);
    expect(listSignatures(signed).map((s) => s.fieldName)).toEqual([fieldName]);
    await expect(prepareSignature(signed, { certificate: pki.users.p256.certDer, fieldName })).rejects.toMatchObject({
      code: 'PDF_FIELD_EXISTS',
      message: expect.stringContaining('already signed'),
    });
  });
});

test('trailing padding after %%EOF (as some scanners write) is tolerated and kept', async () => {
  const pki = await testPki();
  const pdf = Buffer.concat([await fixture('classic'), Buffer.alloc(4096, 0)]);
  const signed = await signPdf(pdf, pki.users.p256);
  expect(signed.subarray(0, pdf.length).equals(pdf)).toBe(true);
  expect(await pdfsig(write('padded.pdf', signed))).toContain('Signature is Valid.');
});

test.each([
  [1, 90],
  [2, 270],
])('visible text reads upright on a rotated page (page %d, /Rotate %d)', async (page) => {
  const pki = await testPki();
  // tall and narrow in user space = wide and short as the viewer shows the rotated page
  const signed = await signPdf(await fixture('rotated'), pki.users.p256, { appearance: { page, rect: [60, 200, 120, 500] }, name: 'Tan Ah Kow' });
  const file = write(`rotated-${page}.pdf`, signed);
  expect(await pdfsig(file)).toContain('Signature is Valid.');
  const { execFileSync } = require('node:child_process');
  const html = execFileSync('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), file, '-']).toString();
  const m = /<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">Singpass<\/word>/.exec(html);
  expect(m).not.toBeNull();
  const [x1, y1, x2, y2] = m!.slice(1).map(Number);
  expect(x2! - x1!).toBeGreaterThan(2 * (y2! - y1!)); // horizontal in the viewer's orientation
});
