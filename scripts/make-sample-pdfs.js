#!/usr/bin/env node
// Writes the demo's sample documents (assets/samples/*.pdf): small, text-only, one page each, committed so the
// signing page can offer them without a build step. Run again after changing the wording:
//   node scripts/make-sample-pdfs.js
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { PDFDocument, StandardFonts, rgb } = require('pdf-lib');

const OUT = path.join(__dirname, '..', 'assets', 'samples');
const SAMPLES = [
  {
    file: 'tenancy-agreement.pdf',
    title: 'Tenancy agreement (SAMPLE)',
    lines: ['Landlord: Example Properties Pte Ltd', 'Tenant: the signer named in the Singpass signature',
      'Premises: 1 Example Road, #01-01, Singapore 000001', 'Term: 12 months. Monthly rent: SGD 1,000.',
      'This document exists to demonstrate Singpass document signing in a sandbox.', 'It has no legal effect.'],
  },
  {
    file: 'consent-form.pdf',
    title: 'Data consent form (SAMPLE)',
    lines: ['I consent to Example Clinic keeping my contact details for appointment reminders.',
      'I may withdraw this consent at any time.',
      'This document exists to demonstrate Singpass document signing in a sandbox.', 'It has no legal effect.'],
  },
];

async function make(sample) {
  const doc = await PDFDocument.create();
  // Fixed metadata dates: regenerating gives the same bytes.
  const when = new Date('2026-01-01T00:00:00Z');
  doc.setTitle(sample.title);
  doc.setProducer('singpass-flows sample');
  doc.setCreator('singpass-flows');
  doc.setCreationDate(when);
  doc.setModificationDate(when);
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  page.drawText(sample.title, { x: 72, y: 760, size: 20, font: bold });
  sample.lines.forEach((l, i) => page.drawText(l, { x: 72, y: 720 - i * 20, size: 11, font }));
  page.drawText('Signature (added below when signed with Singpass):', { x: 72, y: 200, size: 11, font, color: rgb(0.3, 0.3, 0.3) });
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

(async () => {
  fs.mkdirSync(OUT, { recursive: true });
  for (const s of SAMPLES) {
    const pdf = await make(s);
    fs.writeFileSync(path.join(OUT, s.file), pdf);
    console.log(`${s.file}: ${pdf.length} bytes`);
  }
})();
