/** @jest-environment ./test/malformed/environment.ts */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ErrorCode } from '../../src/errors';
import { listSignatures, prepareSignature } from '../../src/pades';
import { fixture } from '../fixtures/pdfs';
import { expectTypedError, openssl, sha256, trapUnhandledRejections } from './harness';

/**
 * Broken and hostile PDFs, each written to a temp file and read back as a user's file would be: prepare (the
 * signing entry point) and listSignatures (the reading entry point) must refuse them with a stable code — never
 * hang on a loop, never throw a raw parser error — and neither the file nor the Buffer handed in may change.
 */
trapUnhandledRejections();

const CERT = openssl('openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout k -subj /CN=User -days 30 -outform DER -out c', 'c');

const latin1 = (b: Buffer) => b.toString('latin1');
const bytes = (s: string) => Buffer.from(s, 'latin1');
const lastStartxref = (pdf: Buffer) => Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(latin1(pdf))![1]);

/** Append an incremental update (classic xref) redefining `objects`; `trailer` adds or overrides trailer entries. */
function update(pdf: Buffer, objects: Record<number, string>, trailer = ''): Buffer {
  let out = latin1(pdf);
  if (!out.endsWith('\n')) out += '\n';
  const offsets: Array<[number, number]> = [];
  for (const [n, body] of Object.entries(objects)) {
    offsets.push([Number(n), out.length]);
    out += `${n} 0 obj\n${body}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 1\n0000000000 65535 f \n${offsets.map(([n, o]) => `${n} 1\n${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size 9 /Root 2 0 R /Prev ${lastStartxref(pdf)} ${trailer} >>\nstartxref\n${xref}\n%%EOF\n`;
  return bytes(out);
}

/** Overwrite the data of the first stream whose dictionary contains `marker` with same-length garbage. */
function corruptStream(pdf: Buffer, marker: string): Buffer {
  const s = latin1(pdf);
  const at = s.indexOf(marker);
  if (at < 0) throw new Error(`fixture has no ${marker}`);
  const start = s.indexOf('stream', at) + 'stream'.length + (s[s.indexOf('stream', at) + 6] === '\r' ? 2 : 1);
  const end = s.indexOf('endstream', start);
  return bytes(s.slice(0, start) + 'Z'.repeat(end - start) + s.slice(end));
}

/**
 * `page`: drawn on that page (a visible signature), which is when the page tree matters; `listable`: reading the
 * signatures legitimately works (nothing there is needed to list them), so listSignatures must return a list.
 */
interface Row { name: string; pdf: () => Promise<Buffer>; code: ErrorCode; page?: number; listable?: boolean }
const classic = () => fixture('classic');
const rows: Row[] = [
  { name: 'empty file', pdf: async () => Buffer.alloc(0), code: 'PDF_INVALID' },
  { name: 'a text file', pdf: async () => bytes('Dear customer,\nplease sign.\n'), code: 'PDF_INVALID' },
  { name: 'a PNG image', pdf: async () => Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), code: 'PDF_INVALID' },
  { name: 'the header only', pdf: async () => bytes('%PDF-1.7\n'), code: 'PDF_INVALID' },
  { name: 'truncated to half', pdf: async () => (await classic()).subarray(0, (await classic()).length >> 1), code: 'PDF_INVALID' },
  { name: 'truncated inside the xref table', pdf: async () => { const p = await classic(); return p.subarray(0, lastStartxref(p) + 40); }, code: 'PDF_INVALID' },
  { name: 'no %%EOF and no startxref', pdf: async () => { const p = await classic(); return p.subarray(0, latin1(p).lastIndexOf('startxref')); }, code: 'PDF_INVALID' },
  { name: 'encrypted (by qpdf)', pdf: () => fixture('encrypted'), code: 'PDF_ENCRYPTED', listable: true },
  { name: 'startxref beyond the end', pdf: async () => bytes(latin1(await classic()).replace(/startxref\s+\d+/, 'startxref\n99999999')), code: 'PDF_INVALID' },
  { name: 'startxref not a number', pdf: async () => bytes(latin1(await classic()).replace(/startxref\s+\d+/, 'startxref\nabc')), code: 'PDF_INVALID' },
  { name: 'startxref pointing into an object', pdf: async () => bytes(latin1(await classic()).replace(/startxref\s+\d+/, 'startxref\n20')), code: 'PDF_INVALID' },
  { name: 'garbage xref entries', pdf: async () => bytes(latin1(await classic()).replace(/(xref\n0 \d+\n)([\s\S]*?)(trailer)/, (_m, a, entries: string, t) => a + entries.replace(/\d/g, '9') + t)), code: 'PDF_INVALID' },
  { name: 'xref replaced by text', pdf: async () => bytes(latin1(await classic()).replace(/xref\n0 \d+\n[\s\S]*?trailer/, (m) => 'junk'.padEnd(m.length - 'trailer'.length, '#') + 'trailer')), code: 'PDF_INVALID' },
  { name: 'trailer without /Root', pdf: async () => bytes(latin1(await classic()).replace('/Root 2 0 R', '/Xoot 2 0 R')), code: 'PDF_INVALID' },
  { name: '/Root pointing to a number', pdf: async () => update(await classic(), { 2: '42' }), code: 'PDF_INVALID' },
  { name: 'catalog without /Pages', pdf: async () => update(await classic(), { 2: '<< /Type /Catalog >>' }), code: 'PDF_INVALID', page: 1, listable: true },
  { name: 'huge /Count in the page tree (page 3 of 2 asked for)', pdf: async () => update(await classic(), { 1: '<< /Type /Pages /Kids [ 5 0 R 7 0 R ] /Count 999999999999 >>' }), code: 'PDF_INVALID', page: 3, listable: true },
  { name: 'page tree that contains itself', pdf: async () => update(await classic(), { 1: '<< /Type /Pages /Kids [ 1 0 R ] /Count 1 >>' }), code: 'PDF_INVALID', page: 1, listable: true },
  { name: '/Kids not an array', pdf: async () => update(await classic(), { 1: '<< /Type /Pages /Kids 5 /Count 1 >>' }), code: 'PDF_INVALID', page: 1, listable: true },
  { name: '/Prev pointing to itself', pdf: async () => { const p = await classic(); const u = update(p, {}); return bytes(latin1(u).replace(`/Prev ${lastStartxref(p)}`, `/Prev ${lastStartxref(u)}`.padEnd(`/Prev ${lastStartxref(p)}`.length))); }, code: 'PDF_INVALID' },
  { name: '/Prev chain with a cycle of two', pdf: async () => { const p = await classic(); const a = update(p, { 3: '<< >>' }); const b = update(a, { 3: '<< >>' }); return bytes(latin1(b).replace(`/Prev ${lastStartxref(p)} `, `/Prev ${lastStartxref(b)} `.padEnd(`/Prev ${lastStartxref(p)} `.length))); }, code: 'PDF_INVALID' },
  { name: '/Prev beyond the end', pdf: async () => update(await classic(), { 3: '<< >>' }, '/Prev 99999999'), code: 'PDF_INVALID' },
  { name: 'object stream with corrupt data', pdf: async () => corruptStream(await fixture('qpdfObjectStreams'), '/Type /ObjStm'), code: 'PDF_INVALID' },
  { name: 'xref stream with corrupt data', pdf: async () => corruptStream(await fixture('qpdfObjectStreams'), '/Type /XRef'), code: 'PDF_INVALID' },
  { name: 'xref stream with a bad /W', pdf: async () => bytes(latin1(await fixture('xrefStream')).replace(/\/W\s*\[\s*\d+\s+\d+\s+\d+\s*\]/, (m) => '/W [ 9 9 9 ]'.padEnd(m.length))), code: 'PDF_INVALID' },
  { name: 'xref stream with an unsupported filter', pdf: async () => bytes(latin1(await fixture('qpdfObjectStreams')).replace(/(\/Type \/XRef[^>]*)\/FlateDecode/, '$1/JBIG2Decode')), code: 'PDF_INVALID' },
];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'malformed-pdf-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const prepare = (pdf: Buffer, page?: number) =>
  prepareSignature(pdf, { certificate: CERT, ...(page ? { appearance: { page, rect: [50, 50, 250, 100] as [number, number, number, number] } } : {}) });

describe.each(['prepareSignature', 'listSignatures'] as const)('malformed PDFs: %s', (entry) => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const file = path.join(dir, `${entry}-${row.name.replace(/\W+/g, '-')}.pdf`);
    fs.writeFileSync(file, await row.pdf());
    const before = sha256(fs.readFileSync(file));
    const input = fs.readFileSync(file);
    if (entry === 'prepareSignature') await expectTypedError(() => prepare(input, row.page), { code: row.code });
    else if (row.listable) expect(listSignatures(input)).toEqual([]);
    else await expectTypedError(() => listSignatures(input), { code: row.code });
    expect(sha256(input)).toBe(before);
    expect(sha256(fs.readFileSync(file))).toBe(before);
  });
});

it('a PDF that is not a Buffer names the field', async () => {
  await expectTypedError(() => prepareSignature('%PDF-1.7' as never, { certificate: CERT }), { code: 'INVALID_INPUT', field: 'pdf' });
});

it('the unbroken fixtures these rows are made from are accepted (the rows fail for their defect only)', async () => {
  for (const pdf of [await classic(), update(await classic(), { 3: '<< >>' }), await fixture('qpdfObjectStreams'), await fixture('xrefStream')]) {
    expect((await prepareSignature(pdf, { certificate: CERT, appearance: { page: 1, rect: [50, 50, 250, 100] } })).documentHash).toMatch(/^[0-9a-f]{64}$/);
  }
});
