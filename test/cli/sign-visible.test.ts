/**
 * `singpass-flows sign` draws a visible box by default and takes its placement; `verify` says where each signature
 * is and whether it shows.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../cli';
import { listSignatures } from '../../src/pades';
import { fixture } from '../fixtures/pdfs';

let dir: string;
let out: string[];
let err: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cli-sign-visible-'));
  writeFileSync(join(dir, 'two-pages.pdf'), await fixture('classic'));
  writeFileSync(join(dir, 'form.pdf'), await fixture('emptySignatureFields'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeEach(() => {
  out = [];
  err = [];
  jest.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  jest.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
});
afterEach(() => jest.restoreAllMocks());

it('signs visibly by default (bottom-right of the last page); verify reports the field, page and rectangle', async () => {
  const pdfOut = join(dir, 'default.pdf');
  expect(await main(['sign', '--in', join(dir, 'two-pages.pdf'), '--out', pdfOut, '--level', 'B-B'])).toBe(0);
  const [sig] = listSignatures(readFileSync(pdfOut));
  expect(sig).toMatchObject({ fieldName: 'Signature1', page: 2, visible: true, rect: [349, 36, 559, 108] });
  out = [];
  await main(['verify', pdfOut]);
  expect(out.join('\n')).toContain('Appearance: visible on page 2 at [349, 36, 559, 108]');
  out = [];
  await main(['verify', pdfOut, '--json']);
  expect(JSON.parse(out.join('\n')).signatures[0]).toMatchObject({ fieldName: 'Signature1', page: 2, rect: [349, 36, 559, 108], visible: true });
});

it('--invisible keeps the signature off the page', async () => {
  const pdfOut = join(dir, 'invisible.pdf');
  expect(await main(['sign', '--in', join(dir, 'two-pages.pdf'), '--out', pdfOut, '--level', 'B-B', '--invisible'])).toBe(0);
  expect(listSignatures(readFileSync(pdfOut))[0]).toMatchObject({ visible: false, page: 1 });
  out = [];
  await main(['verify', pdfOut]);
  expect(out.join('\n')).toContain('Appearance: invisible (page 1)');
});

it('--page, --corner, --size and --rect place the box', async () => {
  const a = join(dir, 'corner.pdf');
  expect(await main(['sign', '--in', join(dir, 'two-pages.pdf'), '--out', a, '--level', 'B-B', '--page', 'first', '--corner', 'top-left', '--size', '150,50'])).toBe(0);
  expect(listSignatures(readFileSync(a))[0]).toMatchObject({ page: 1, rect: [36, 842 - 36 - 50, 36 + 150, 842 - 36] });
  const b = join(dir, 'rect.pdf');
  expect(await main(['sign', '--in', join(dir, 'two-pages.pdf'), '--out', b, '--level', 'B-B', '--page', '2', '--rect', '100, 100, 300, 170'])).toBe(0);
  expect(listSignatures(readFileSync(b))[0]).toMatchObject({ page: 2, rect: [100, 100, 300, 170] });
});

it('--field fills the form’s empty signature field', async () => {
  const pdfOut = join(dir, 'field.pdf');
  expect(await main(['sign', '--in', join(dir, 'form.pdf'), '--out', pdfOut, '--level', 'B-B', '--field', 'Witness'])).toBe(0);
  expect(listSignatures(readFileSync(pdfOut)).map((s) => [s.fieldName, s.page, s.visible])).toEqual([['Witness', 2, true]]);
});

it.each([
  [['--rect', '1,2,3'], '--rect'],
  [['--corner', 'middle'], '--corner'],
  [['--page', 'zero'], '--page'],
  [['--invisible', '--field', 'Witness'], '--field and --invisible'],
])('bad box flags %j → usage error naming %s, nothing started', async (flags, named) => {
  expect(await main(['sign', '--in', join(dir, 'two-pages.pdf'), '--out', join(dir, 'bad.pdf'), ...flags])).toBe(2);
  expect(err.join('\n')).toContain(named);
  expect(out.join('\n')).not.toContain('session');
});
