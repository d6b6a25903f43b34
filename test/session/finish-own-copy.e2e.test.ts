/**
 * finish copies the session's PDF into the signed file's own Buffer before checking it: what is signed and verified
 * is exactly the bytes checked against the record, even when the caller changes its PDF while finish waits on the
 * TSA; and a PDF other than the session's is still refused before anything happens. Against the sandbox over HTTP.
 */
import { samplePdf } from '../pades/ltv-helpers';
import { verifyPdfSignatures } from '../../src/pades/verify';
import type { SessionRecord } from '../../src/session';
import { startSessionHarness, until, type SessionHarness } from './harness';

let h: SessionHarness;
let pdf: Buffer;
beforeAll(async () => {
  h = await startSessionHarness({ mode: 'steps' });
  pdf = await samplePdf('Own copy');
});
afterAll(() => h.close());

/** A session driven through its steps up to `signed` (the user approved). */
async function signedRecord(): Promise<SessionRecord> {
  const engine = h.newEngine();
  const started = await engine.start(pdf, { documentName: 'Own copy.pdf', level: 'B-T' });
  let n = h.raw.length;
  await h.sandbox.phone.scan(started.signRef, { user: 'p256' });
  await until(() => h.raw.length > n, 'the certificate webhook');
  const cert = await engine.checkDelivery(h.raw[n]!);
  let record = (await engine.applyDelivery(started.record, cert.delivery!, pdf)).record;
  n = h.raw.length;
  await h.sandbox.phone.approve(started.signRef);
  await until(() => h.raw.length > n, 'the signature webhook');
  const sig = await engine.checkDelivery(h.raw[n]!);
  record = (await engine.applyDelivery(record, sig.delivery!, pdf)).record;
  expect(record.state.status).toBe('signed');
  return record;
}

it('the caller changing its PDF while finish waits on the TSA: the signed file is the session\'s PDF, and it verifies', async () => {
  const record = await signedRecord();
  const mine = Buffer.from(pdf);
  let changed = false;
  const engine = h.newEngine({
    fetch: async (url, init) => {
      if (String(url).startsWith(h.sandbox.urls.tsa)) {
        mine.fill(0x20, 200, 400); // mid-flight: the caller's Buffer is no longer the session's PDF
        changed = true;
      }
      return fetch(url, init);
    },
  });
  const f = await engine.finish(record, mine);
  expect(changed).toBe(true);
  expect(f.record.state.status).toBe('completed');
  expect(f.record.result).toEqual({ level: 'B-T', valid: true });
  expect(f.pdf!.subarray(0, pdf.length).equals(pdf)).toBe(true);
  const report = await verifyPdfSignatures(f.pdf!, { trustedRoots: [h.sandbox.pki.root.certDer] });
  expect(report.newest).toMatchObject({ valid: true, level: 'B-T' });
});

it('another PDF than the session\'s is refused before anything, the record untouched', async () => {
  const record = await signedRecord();
  const other = Buffer.from(pdf);
  other[300] ^= 0x01;
  await expect(h.newEngine().finish(record, other)).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'pdf' } });
  await expect(h.newEngine().finish(record, Buffer.concat([pdf, Buffer.from('\n')]))).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'pdf' } });
  const f = await h.newEngine().finish(record, pdf);
  expect(f.record.result).toEqual({ level: 'B-T', valid: true });
});
