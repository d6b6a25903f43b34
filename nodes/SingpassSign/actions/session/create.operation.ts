import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import type { PadesLevel } from '../../../../src/pades';
import { documentNameFor, issueSignerLink, type SessionAppearance, type SessionRecord, type StartSessionInput } from '../../../../src/session';
import { appearanceFromSettings } from '../../../../src/setup';
import { checkAppLink, renderQr } from '../../../../src/sign';
import { readPdf } from '../../../shared/binary';
import { signingEngine } from '../../../shared/engine';
import { forOperation } from '../../../shared/router';
import { recordSummary } from '../../../shared/session-data';
import { nextSignerLink, signerLinkKeys, signerQuery } from '../../../shared/signer-links';
import { pdfInput } from '../fields';

export const LEVEL_OPTIONS = [
  { name: 'B-B (Signature Only)', value: 'B-B' },
  { name: 'B-T (With Signature Timestamp)', value: 'B-T' },
  { name: 'B-LT (With Validation Data)', value: 'B-LT' },
  { name: 'B-LTA (With Document Timestamp)', value: 'B-LTA' },
];

/**
 * Node versions whose Signature Level is B-T by default (saved workflows keep asking for what they asked for) and
 * those where it is B-LTA (version 3 on: long-term validation, the level the engine finishes to by default).
 */
export const LEVEL_B_T_BY_DEFAULT_VERSIONS = [1, 2];
export const LEVEL_B_LTA_BY_DEFAULT_VERSIONS = [3];

/** The node's Signature Level, its version's default when unset. */
function levelOf(ctx: IExecuteFunctions, i: number): PadesLevel {
  const fallback: PadesLevel = LEVEL_B_T_BY_DEFAULT_VERSIONS.includes(ctx.getNode().typeVersion) ? 'B-T' : 'B-LTA';
  return ctx.getNodeParameter('level', i, fallback) as PadesLevel;
}

/** The session's parameters, shared with Session Record ▸ Create Session (which also saves the record). */
export const createSessionFields: INodeProperties[] = [
  pdfInput,
  {
    displayName: 'Document Name',
    name: 'documentName',
    type: 'string',
    default: '',
    placeholder: 'Contract.pdf',
    description: 'Shown to the user in the Singpass app (1–255 characters). Empty: the PDF\'s file name.',
  },
  // one parameter, a default per version: n8n saves a workflow without the parameters left at their default, so a
  // version-1/2 node saved that way must keep asking for B-T; version 3 asks for B-LTA, what the engine finishes to
  {
    displayName: 'Signature Level',
    name: 'level',
    type: 'options',
    options: LEVEL_OPTIONS,
    default: 'B-T',
    description: 'The PAdES level Finalize Signature reaches. B-LT and B-LTA can also be added later with the Document operations.',
    displayOptions: { show: { '@version': LEVEL_B_T_BY_DEFAULT_VERSIONS } },
  },
  {
    displayName: 'Signature Level',
    name: 'level',
    type: 'options',
    options: LEVEL_OPTIONS,
    default: 'B-LTA',
    description: 'The PAdES level the session is finished to (Finalize Signature, Run Due Step). B-LTA: long-term validation — validation data and an archive timestamp, so the signature can still be checked after the certificates expire.',
    displayOptions: { show: { '@version': LEVEL_B_LTA_BY_DEFAULT_VERSIONS } },
  },
  {
    displayName: 'Signature Box',
    name: 'signatureBox',
    type: 'options',
    options: [
      { name: 'In a Corner of a Page', value: 'corner', description: 'The signer\'s name, "Signed with Singpass", the time and the reason, drawn on the page' },
      { name: 'In a Form Signature Field', value: 'field', description: 'The form\'s own empty "Sign here" field, by name' },
      { name: 'In a Rectangle', value: 'rect', description: 'Where you say, in PDF points' },
      { name: 'In the Next Empty Form Field', value: 'nextEmptyField', description: 'For several signers: each fills the next one (a corner when none is left)' },
      { name: 'Invisible', value: 'invisible', description: 'Shown only in a signature panel such as Adobe Reader\'s' },
    ],
    default: 'corner',
    description: 'Where the signature shows in the PDF. Browsers\' and most phones\' PDF viewers show only a visible box.',
  },
  {
    displayName: 'Box Page',
    name: 'boxPage',
    type: 'string',
    default: 'last',
    placeholder: 'last',
    description: 'The page of the box: "first", "last" or a page number',
    displayOptions: { show: { signatureBox: ['corner', 'rect', 'nextEmptyField'] } },
  },
  {
    displayName: 'Box Corner',
    name: 'boxCorner',
    type: 'options',
    options: [
      { name: 'Bottom Left', value: 'bottom-left' },
      { name: 'Bottom Right', value: 'bottom-right' },
      { name: 'Top Left', value: 'top-left' },
      { name: 'Top Right', value: 'top-right' },
    ],
    default: 'bottom-right',
    description: 'Corner of the page as it is shown (rotated pages and cropped pages included). A later signer\'s box steps aside from earlier ones.',
    displayOptions: { show: { signatureBox: ['corner', 'nextEmptyField'] } },
  },
  {
    displayName: 'Box Rectangle',
    name: 'boxRect',
    type: 'string',
    default: '',
    placeholder: '350, 60, 560, 132',
    description: 'The box as x1, y1, x2, y2 in PDF points from the bottom-left of the page (an A4 page is 595 × 842)',
    displayOptions: { show: { signatureBox: ['rect'] } },
  },
  {
    displayName: 'Form Field Name',
    name: 'boxField',
    type: 'string',
    default: '',
    placeholder: 'Sign here',
    description: 'Full name of the form\'s empty signature field to fill',
    displayOptions: { show: { signatureBox: ['field'] } },
  },
  {
    displayName: 'Options',
    name: 'options',
    type: 'collection',
    placeholder: 'Add Option',
    default: {},
    options: [
      {
        displayName: 'App Link',
        name: 'appLink',
        type: 'string',
        default: '',
        placeholder: 'https://app.example.sg/signed',
        description: 'Your own app\'s registered app-claimed https link (at most 255 characters): the Singpass app sends the user back there after approving. Leave empty when people sign from the signer\'s page in a browser; they switch back by hand and the page catches up.',
      },
      {
        displayName: 'Box Image Binary Field',
        name: 'boxImageProperty',
        type: 'string',
        default: '',
        placeholder: 'logo',
        description: 'Binary property of the input item holding a PNG or JPEG (at most 512 KB) drawn on the left of the signature box: a logo or a handwritten mark',
      },
      {
        displayName: 'Box Size',
        name: 'boxSize',
        type: 'string',
        default: '210, 72',
        description: 'Width, height in points of a box placed in a corner',
      },
      { displayName: 'Location', name: 'location', type: 'string', default: '', description: 'Location recorded in the signature' },
      {
        displayName: 'On Behalf Of',
        name: 'onBehalfOf',
        type: 'json',
        default: '={{ $json.onBehalfOf }}',
        description: 'Signing for a company: the "onBehalfOf" Corppass Complete Login outputs with Require Role ({ uen, entityName?, role, eserviceId }). Kept in the record, shown on the signer\'s page and in the document name the user sees in the app.',
      },
      { displayName: 'QR Binary Field', name: 'qrProperty', type: 'string', default: 'qr', description: 'Binary property for the QR code PNG' },
      {
        displayName: 'QR Code Images',
        name: 'qrImages',
        type: 'boolean',
        default: true,
        description: 'Whether to output the QR code as a PNG (binary) and as inline SVG ("qrSvg"). Turn off when your page draws the QR code from "qrPayload", as the Signer Page operation does: each session then costs less.',
      },
      { displayName: 'QR Code Width', name: 'qrWidth', type: 'number', default: 320, description: 'Width of the QR code PNG in pixels' },
      { displayName: 'Reason', name: 'reason', type: 'string', default: '', description: 'Reason recorded in the signature (e.g. "Approved")' },
      {
        displayName: 'Signer',
        name: 'signer',
        type: 'json',
        default: '{ "position": 1, "of": 2, "label": "First signer" }',
        description: 'One of several signers in order: { position, of, label?, previousSignRef? } (previousSignRef: the session whose signed PDF this one signs; required from the second signer on). Kept in the record and shown on the signer\'s page.',
      },
    ],
  },
];

export const description: INodeProperties[] = forOperation('session', 'createSession', createSessionFields);

/**
 * Checks the PDF can be signed, then opens a signing session. Outputs what the user's page shows (QR payload, and
 * unless turned off the QR code as PNG and SVG; challenge code, expiry) and the session record to store under signRef, with the PDF kept as binary.
 */
export async function execute(this: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<INodeExecutionData> {
  return (await createSessionItem(this, i, item)).output;
}

/** Create Session for item `i`: the output item, and the record and PDF for a caller that saves them. */
export async function createSessionItem(ctx: IExecuteFunctions, i: number, item: INodeExecutionData): Promise<{ output: INodeExecutionData; record: SessionRecord; pdf: Buffer }> {
  const property = ctx.getNodeParameter('binaryPropertyName', i);
  const { pdf, meta } = await readPdf(ctx, i, property);
  const o = ctx.getNodeParameter('options', i, {}) as {
    appLink?: string; reason?: string; location?: string; qrImages?: boolean; qrWidth?: number; qrProperty?: string; onBehalfOf?: unknown; signer?: unknown;
    boxImageProperty?: string; boxSize?: string;
  };
  const appearance = await boxAppearance(ctx, i, item, o);
  const onBehalfOf = givenJson('On Behalf Of', o.onBehalfOf) as StartSessionInput['onBehalfOf'];
  const signer = givenJson('Signer', o.signer) as StartSessionInput['signer'];
  // the entity and role go into the name the user sees in the app, so they know in what capacity they sign
  const documentName = documentNameFor((ctx.getNodeParameter('documentName', i) as string).trim() || meta.fileName || 'document.pdf', onBehalfOf);
  const { engine } = await signingEngine(ctx);
  const s = await engine.start(pdf, {
    documentName, level: levelOf(ctx, i), reason: o.reason || undefined, location: o.location || undefined,
    ...(onBehalfOf ? { onBehalfOf } : {}), ...(signer ? { signer } : {}), ...(o.appLink?.trim() ? { appLink: appLinkOption(o.appLink.trim()) } : {}),
    ...(appearance ? { appearance } : {}),
  });
  // the signer's page link: keyed with the notification token secret, checked by Signer Page on any process
  const linkKeys = await signerLinkKeys(ctx, i);
  const link = issueSignerLink({ ...linkKeys, signRef: s.signRef, purpose: 'page' });
  // rendering and keeping the images is most of this node's work: skipped when the page draws the QR itself
  const images = o.qrImages !== false;
  const width = o.qrWidth || 320;
  const output: INodeExecutionData = {
    json: {
      ...recordSummary(s.record),
      qrPayload: s.qrPayload,
      challengeCode: s.challengeCode,
      // The same QR code as inline SVG, for an HTML page answered by Respond to Webhook.
      ...(images ? { qrSvg: await renderQr(s.qrPayload, { format: 'svg', width }) } : {}),
      expiresAt: new Date(s.expiresAt * 1000).toISOString(),
      documentName,
      signerLink: { key: link.token, expiresAt: link.expiresAt, query: signerQuery(s.signRef, link.token) },
      // one of several signers, not the last: the link to send the next one (Start Next Signer checks it)
      ...(signer && signer.position < signer.of ? { nextSignerLink: nextSignerLink(linkKeys, s.signRef) } : {}),
      ...(onBehalfOf ? { onBehalfOf } : {}),
      ...(signer ? { signer } : {}),
    },
    binary: images
      ? { ...(item.binary ?? {}), [o.qrProperty || 'qr']: await ctx.helpers.prepareBinaryData(await renderQr(s.qrPayload, { format: 'png', width }), `singpass-qr-${s.signRef}.png`, 'image/png') }
      : item.binary,
  };
  return { output, record: s.record, pdf };
}

/** The App Link option, checked here so the message names the option as the editor shows it. */
function appLinkOption(v: string): string {
  try {
    return checkAppLink(v)!;
  } catch (e) {
    throw invalidInput('App Link', (e as Error).message.replace(/^appLink: /, ''));
  }
}

const BOX_LABELS = {
  where: 'Create Session',
  fields: {
    appearance: 'Signature Box', 'appearance.placement': 'Signature Box', 'appearance.page': 'Box Page', 'appearance.corner': 'Box Corner',
    'appearance.rect': 'Box Rectangle', 'appearance.field': 'Form Field Name', 'appearance.size': 'Box Size', 'appearance.image': 'Box Image Binary Field',
  },
};

/** The Signature Box parameters → the session's appearance (undefined: invisible). */
async function boxAppearance(ctx: IExecuteFunctions, i: number, item: INodeExecutionData, o: { boxImageProperty?: string; boxSize?: string }): Promise<SessionAppearance | undefined> {
  const placement = ctx.getNodeParameter('signatureBox', i, 'corner') as string;
  if (placement === 'invisible') return undefined;
  const param = (name: string) => (ctx.getNodeParameter(name, i, '') as string) || undefined;
  let image: Buffer | undefined;
  if (o.boxImageProperty) {
    if (!item.binary?.[o.boxImageProperty]) throw invalidInput('Box Image Binary Field', `the item has no binary property "${o.boxImageProperty}"`);
    image = await ctx.helpers.getBinaryDataBuffer(i, o.boxImageProperty);
  }
  return appearanceFromSettings({
    placement,
    page: ['corner', 'rect', 'nextEmptyField'].includes(placement) ? param('boxPage') : undefined,
    corner: ['corner', 'nextEmptyField'].includes(placement) ? param('boxCorner') : undefined,
    rect: placement === 'rect' ? param('boxRect') : undefined,
    field: placement === 'field' ? param('boxField') : undefined,
    size: ['corner', 'nextEmptyField'].includes(placement) ? o.boxSize || undefined : undefined,
    image,
  }, BOX_LABELS);
}

/** An optional JSON option: absent when empty (the core checks the shape). */
function givenJson(field: string, v: unknown): unknown {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    throw invalidInput(field, 'is text but not valid JSON');
  }
}
