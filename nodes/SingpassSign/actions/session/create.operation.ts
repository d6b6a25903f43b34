import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import type { PadesLevel } from '../../../../src/pades';
import { renderQr } from '../../../../src/sign';
import { readPdf } from '../../../shared/binary';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { recordSummary } from '../../../shared/session-data';
import { pdfInput } from '../fields';

export const LEVEL_OPTIONS = [
  { name: 'B-B (Signature Only)', value: 'B-B' },
  { name: 'B-T (With Signature Timestamp)', value: 'B-T' },
  { name: 'B-LT (With Validation Data)', value: 'B-LT' },
  { name: 'B-LTA (With Document Timestamp)', value: 'B-LTA' },
];

export const description: INodeProperties[] = forOperation('session', 'createSession', [
  pdfInput,
  {
    displayName: 'Document Name',
    name: 'documentName',
    type: 'string',
    default: '',
    placeholder: 'Contract.pdf',
    description: 'Shown to the user in the Singpass app (1–255 characters). Empty: the PDF\'s file name.',
  },
  {
    displayName: 'Signature Level',
    name: 'level',
    type: 'options',
    options: LEVEL_OPTIONS,
    default: 'B-T',
    description: 'The PAdES level Finalize Signature reaches. B-LT and B-LTA can also be added later with the Document operations.',
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add Option',
    default: {},
    options: [
      { displayName: 'Reason', name: 'reason', type: 'string', default: '', description: 'Reason recorded in the signature (e.g. "Approved")' },
      { displayName: 'Location', name: 'location', type: 'string', default: '', description: 'Location recorded in the signature' },
      { displayName: 'QR Code Width', name: 'qrWidth', type: 'number', default: 320, description: 'Width of the QR code PNG in pixels' },
      { displayName: 'QR Binary Field', name: 'qrProperty', type: 'string', default: 'qr', description: 'Binary property for the QR code PNG' },
    ],
  },
]);

/**
 * Checks the PDF can be signed, then opens a signing session. Outputs what the user's page shows (QR code PNG,
 * challenge code, expiry) and the session record to store under signRef, with the PDF kept as binary.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  const property = this.getNodeParameter('binaryPropertyName', i);
  const { pdf, meta } = await readPdf(this, i, property);
  const o = this.getNodeParameter('options', i, {}) as { reason?: string; location?: string; qrWidth?: number; qrProperty?: string };
  const documentName = (this.getNodeParameter('documentName', i) as string).trim() || meta.fileName || 'document.pdf';
  const { engine } = await signingEngine(this);
  const s = await engine.start(pdf, {
    documentName, level: this.getNodeParameter('level', i) as PadesLevel, reason: o.reason || undefined, location: o.location || undefined,
  });
  const png = await renderQr(s.qrPayload, { format: 'png', width: o.qrWidth || 320 });
  return {
    json: {
      ...recordSummary(s.record),
      qrPayload: s.qrPayload,
      challengeCode: s.challengeCode,
      // The same QR code as inline SVG, for an HTML page answered by Respond to Webhook.
      qrSvg: await renderQr(s.qrPayload, { format: 'svg', width: o.qrWidth || 320 }),
      expiresAt: new Date(s.expiresAt * 1000).toISOString(),
      documentName,
    },
    binary: {
      ...(item.binary ?? {}),
      [o.qrProperty || 'qr']: await this.helpers.prepareBinaryData(png, `singpass-qr-${s.signRef}.png`, 'image/png'),
    },
  };
}
