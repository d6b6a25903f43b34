/**
 * The signing example's verification report page (Node-RED): the "report data" function turns the verify report on
 * the stored signed PDF into what the page shows, and the page is rendered with mustache, the engine of Node-RED's template node.
 * A valid B-LTA shows notes (what B-LT/B-LTA appended) and no problems; a document changed after signing shows the
 * problem in plain words.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startPkiServer, type RunningPkiServer } from '../../sandbox/pki';
import { addValidationData } from '../../src/pades/ltv';
import { verifyPdfSignatures, type PdfVerificationReport } from '../../src/pades/verify';
import { changePageContent, samplePdf, signToLevel } from '../pades/ltv-helpers';

// The engine of Node-RED's template node (node-red depends on it; it ships no types).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Mustache = require('mustache') as { render(template: string, view: unknown): string };

const SOURCES = join(__dirname, '..', '..', 'scripts', 'node-red-examples');
const reportData = readFileSync(join(SOURCES, 'functions', 'report-data.js'), 'utf8');
const template = readFileSync(join(SOURCES, 'pages', 'verification-report.html'), 'utf8');

let server: RunningPkiServer;
let blta: Buffer;
let root: Buffer;
beforeAll(async () => {
  server = await startPkiServer();
  const { pki } = server;
  root = pki.root.certDer;
  const signer = { certDer: pki.users.p256.certDer, privateKey: pki.users.p256.privateKey, chain: [pki.intermediate.certDer] };
  const stages = await signToLevel(await samplePdf(), signer, 'B-LTA', { tsaUrl: `${server.baseUrl}/ca/tsa`, trustedRoots: [root] });
  blta = await addValidationData(stages.blta!, { trustedRoots: [root] });
});
afterAll(async () => { await server?.close(); });

/** The page for a report: the function node's data, then the template as the report route renders it. */
function reportPage(verification: PdfVerificationReport): string {
  // the function node's body, as Node-RED runs it (msg in scope); the report goes through JSON like msg copies
  const msg = { signRef: 'REF1', verification: JSON.parse(JSON.stringify(verification)), session: { request: { documentName: 'Agreement.pdf' } }, req: { query: { link: 'L' } } };
  const out = new Function('msg', reportData)(msg) as { payload: unknown };
  expect(out.payload).toBeDefined();
  return Mustache.render(template, { payload: out.payload });
}

const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ');

it('a valid B-LTA: notes in plain words (validation data, document timestamp), no problems', async () => {
  const page = text(reportPage(await verifyPdfSignatures(blta, { trustedRoots: [root] })));
  expect(page).toContain('Valid — PAdES B-LTA');
  expect(page).not.toContain('Problems');
  expect(page).not.toContain('NOT_COVERING_WHOLE_FILE');
  expect(page).toContain('Notes Validation data (certificates and revocation answers) was added after this signature. This is what B-LT means; it does not change what was signed. VALIDATION_DATA_ADDED');
  expect(page).toContain('A document timestamp was added after this signature ("DocTimeStamp1"). This is what B-LTA means');
  expect(page).toContain('intact: the signed bytes are unchanged and the signature verifies');
});

it('page content changed after signing: NOT valid, the problem said plainly', async () => {
  const page = text(reportPage(await verifyPdfSignatures(changePageContent(blta), { trustedRoots: [root] })));
  expect(page).toContain('NOT valid');
  expect(page).toContain('but the document was CHANGED after it was signed');
  expect(page).toContain('Problems The document was changed after this signature was made: the content of a page was changed. What the PDF shows now may not be what was signed. NOT_COVERING_WHOLE_FILE');
});
