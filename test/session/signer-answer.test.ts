/**
 * The signer's address answered once for every engine: the link first, then the page, its status JSON or the signed
 * PDF; each refusal with its status code, stable code and words, and the same private headers on every answer.
 */
import { answerSignerRequest, issueSignerLink, signedFileName, SIGNER_PAGE_HEADERS, type SignerAnswerOptions, type SignerView } from '../../src/session';
import type { SessionRecord } from '../../src/session/types';
import { record } from './records';

const secret = 'a-signer-link-secret-of-at-least-32-characters';
const signed = Buffer.from('%PDF-1.7 signed');

function options(records: SessionRecord[], reads: string[] = []): SignerAnswerOptions {
  return {
    secret,
    store: {
      get: (ref) => { reads.push(ref); return records.find((r) => r.state.signRef === ref); },
      getSignedDocument: (ref) => (ref === 'ref' ? signed : undefined),
    },
    statusUrl: (t) => `status?link=${t}`,
    downloadUrl: (t) => `signed.pdf?link=${t}`,
  };
}
const link = (purpose: 'page' | 'download', signRef = 'ref') => issueSignerLink({ secret, signRef, purpose }).token;
const ask = (view: SignerView, token: unknown, records: SessionRecord[], reads?: string[], signRef = 'ref') => answerSignerRequest({ signRef, token, view }, options(records, reads));

describe('answerSignerRequest', () => {
  const waiting = record('waiting_for_scan', {}, { qrPayload: 'https://app/qr?x' });
  const completed = record('completed', {
    request: { documentName: 'Lease: 2026/7.pdf — for ACME (T1) as Director', level: 'B-T', onBehalfOf: { uen: 'T1', role: 'Director' } },
    result: { level: 'B-T', valid: true },
  } as Partial<SessionRecord>);

  it('a page with the QR code and challenge code, polling its status address with the same link', async () => {
    const token = link('page');
    const a = await ask('page', token, [waiting]);
    expect(a).toMatchObject({ kind: 'page', statusCode: 200, headers: { ...SIGNER_PAGE_HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-disposition': 'inline' }, status: { stage: 'waitingForScan' } });
    expect(a.body).toContain('0427');
    expect(a.body).toContain(JSON.stringify(`status?link=${token}`));
  });

  it('the status JSON; once signed it carries a fresh download link', async () => {
    const s = await ask('status', link('page'), [waiting]);
    expect(s).toMatchObject({ kind: 'status', statusCode: 200, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(JSON.parse(s.body as string)).toMatchObject({ stage: 'waitingForScan', done: false });
    const done = JSON.parse((await ask('status', link('page'), [completed])).body as string) as { downloadUrl: string };
    expect(done.downloadUrl).toMatch(/^signed\.pdf\?link=/);
  });

  it('the signed PDF as an attachment named after the document, without the company words', async () => {
    const a = await ask('download', link('download'), [completed]);
    expect(a).toMatchObject({ kind: 'download', statusCode: 200, fileName: 'Lease_ 2026_7-signed.pdf', headers: { ...SIGNER_PAGE_HEADERS, 'content-type': 'application/pdf', 'content-disposition': 'attachment; filename="Lease_ 2026_7-signed.pdf"' } });
    expect(a.body).toBe(signed);
  });

  it('refuses a missing, altered, wrong-purpose or other session\'s link before reading the store: 403 LINK_INVALID', async () => {
    const reads: string[] = [];
    for (const token of [undefined, '', 'garbage', link('download'), link('page', 'other')]) {
      const a = await ask('page', token, [waiting], reads);
      expect(a).toMatchObject({ kind: 'refusal', statusCode: 403, code: 'LINK_INVALID', headers: { 'content-type': 'text/html; charset=utf-8' } });
      expect(a.record).toBeUndefined();
    }
    expect(reads).toEqual([]);
    const poll = await ask('status', 'garbage', [waiting]);
    expect(JSON.parse(poll.body as string)).toEqual({ error: { code: 'LINK_INVALID', message: expect.stringContaining('not valid') } });
  });

  it('an expired link: 410 LINK_EXPIRED; a session no longer kept: 404 SIGN_REF_NOT_FOUND; nothing signed: 404 STATE_INVALID', async () => {
    const later = await answerSignerRequest({ signRef: 'ref', token: link('page'), view: 'page' }, { ...options([waiting]), now: Date.now() + 2 * 86_400_000 });
    expect(later).toMatchObject({ statusCode: 410, code: 'LINK_EXPIRED' });
    expect(await ask('page', link('page', 'gone'), [waiting], [], 'gone')).toMatchObject({ statusCode: 404, code: 'SIGN_REF_NOT_FOUND' });
    const early = await ask('download', link('download'), [waiting]);
    expect(early).toMatchObject({ statusCode: 404, code: 'STATE_INVALID' });
    expect(early.body).toContain('not ready yet');
  });

  it('a secret too short to be one is the DSAP\'s fault: thrown, not answered', async () => {
    await expect(answerSignerRequest({ signRef: 'ref', token: 'x', view: 'page' }, { ...options([waiting]), secret: 'short' })).rejects.toThrow();
  });
});

describe('signedFileName', () => {
  it('keeps letters, digits, space, dot, dash and underscore; falls back to "document"', () => {
    expect(signedFileName(record('completed', { request: { documentName: 'a"b\r\nc.PDF', level: 'B-T' } } as Partial<SessionRecord>))).toBe('a_b_c-signed.pdf');
    expect(signedFileName(record('completed', { request: { documentName: '契約.pdf', level: 'B-T' } } as Partial<SessionRecord>))).toBe('_-signed.pdf');
    expect(signedFileName(record('completed', { request: { documentName: '.pdf', level: 'B-T' } } as Partial<SessionRecord>))).toBe('document-signed.pdf');
  });
});
