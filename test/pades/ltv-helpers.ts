/** Shared steps for the LTV/verify suites: sign a PDF up to a PAdES level with a given PKI's user and TSA. */
import type { KeyObject } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { signDigest } from '../../sandbox/phone';
import { addDocumentTimestamp, timestampSignature } from '../../src/pades/doc-timestamp';
import { finalizeSignature, prepareSignature } from '../../src/pades';
import { findPage } from '../../src/pades/acroform';
import { addValidationData } from '../../src/pades/ltv';
import { PdfDict, PdfStream } from '../../src/pades/pdf/objects';
import { PdfReader } from '../../src/pades/pdf/reader';
import { IncrementalUpdate } from '../../src/pades/pdf/writer';
import type { PadesLevel } from '../../src/pades/verify';

export const run = promisify(execFile);

export async function samplePdf(text = 'LTV test document'): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawText(text, { x: 72, y: 760, size: 18, font: await doc.embedFont(StandardFonts.Helvetica) });
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

export interface Signer { certDer: Buffer; privateKey: KeyObject; chain: Buffer[] }

/** Each intermediate stage, so suites can check every level from one run. */
export interface SignedStages { bb?: Buffer; bt?: Buffer; blt?: Buffer; blta?: Buffer }

export async function signToLevel(pdf: Buffer, signer: Signer, level: PadesLevel, opts: { tsaUrl: string; trustedRoots: Buffer[] }): Promise<SignedStages> {
  const { documentHash, state } = await prepareSignature(pdf, { certificate: signer.certDer, chain: signer.chain, reason: 'LTV test' });
  const signature = signDigest(Buffer.from(documentHash, 'hex'), signer.privateKey);
  const stages: SignedStages = {};
  if (level === 'B-B') {
    stages.bb = await finalizeSignature(pdf, JSON.parse(JSON.stringify(state)), signature);
    return stages;
  }
  stages.bt = await finalizeSignature(pdf, state, signature, { timestamp: timestampSignature(opts.tsaUrl) });
  if (level === 'B-T') return stages;
  stages.blt = await addValidationData(stages.bt, { trustedRoots: opts.trustedRoots, vri: true });
  if (level === 'B-LT') return stages;
  stages.blta = await addDocumentTimestamp(stages.blt, { tsaUrl: opts.tsaUrl });
  return stages;
}

/** One incremental update made with `edit`, appended to `pdf` (as another tool would append it). */
export function appendUpdate(pdf: Buffer, edit: (reader: PdfReader, update: IncrementalUpdate) => void): Buffer {
  const reader = PdfReader.open(pdf);
  const update = new IncrementalUpdate(reader);
  edit(reader, update);
  return Buffer.concat([pdf, update.build().bytes]);
}

/** Page 1 now draws other words: a new content stream in place of the signed one, appended after signing. */
export function changePageContent(pdf: Buffer): Buffer {
  return appendUpdate(pdf, (reader, update) => {
    const page = findPage(reader, 1);
    const content = update.add(new PdfStream(new PdfDict(), Buffer.from('BT /F1 18 Tf 72 700 Td (Amount due: 1,000,000 SGD) Tj ET', 'latin1')));
    update.replace(page.ref, page.dict.clone().set('Contents', content));
  });
}
