import { invalidInput } from '../errors';
import type { OnBehalfOf } from '../login/officer';
import { DECEPTIVE_CHARS, checkDocumentName, checkSignRef } from '../sign/validate';
import { checkPlacement } from '../pades/placement';
import { readSignatureImage } from '../pades/signature-image';
import type { SessionAppearance, SignerPlace } from './types';

/**
 * Who a session signs for and where it stands among several signers: checked at start, kept in the record, shown on
 * the signer's page. Text shown to the user goes through the same rules as the document name (no control or
 * text-direction characters).
 */

function text(field: string, v: unknown, max: number): string {
  if (typeof v !== 'string' || v.trim() === '') throw invalidInput(field, 'must be non-empty text');
  if (v.length > max) throw invalidInput(field, `must be at most ${max} characters (got ${v.length})`);
  if (DECEPTIVE_CHARS.test(v)) throw invalidInput(field, 'must not contain control characters or text-direction marks');
  return v;
}

export function checkOnBehalfOf(v: unknown): OnBehalfOf | undefined {
  if (v === undefined) return undefined;
  if (!v || typeof v !== 'object') throw invalidInput('onBehalfOf', 'expected { uen, role, eserviceId, entityName? } (from officerDecision)');
  const o = v as Record<string, unknown>;
  const uen = text('onBehalfOf.uen', o.uen, 32);
  if (!/^[A-Za-z0-9-]+$/.test(uen)) throw invalidInput('onBehalfOf.uen', 'may contain only letters, digits and "-"');
  return {
    uen,
    ...(o.entityName !== undefined ? { entityName: text('onBehalfOf.entityName', o.entityName, 255) } : {}),
    role: text('onBehalfOf.role', o.role, 100),
    eserviceId: text('onBehalfOf.eserviceId', o.eserviceId, 25),
  };
}

export function checkSignerPlace(v: unknown): SignerPlace | undefined {
  if (v === undefined) return undefined;
  if (!v || typeof v !== 'object') throw invalidInput('signer', 'expected { position, of, label?, previousSignRef? }');
  const o = v as Record<string, unknown>;
  const count = (field: string, n: unknown) => {
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 20) throw invalidInput(field, 'must be a whole number from 1 to 20');
    return n as number;
  };
  const position = count('signer.position', o.position);
  const of = count('signer.of', o.of);
  if (position > of) throw invalidInput('signer.position', `is ${position}, past the number of signers (${of})`);
  if (position > 1 && o.previousSignRef === undefined) throw invalidInput('signer.previousSignRef', 'name the session of the signer before (its signed PDF is what this signer signs)');
  return {
    position, of,
    ...(o.label !== undefined ? { label: text('signer.label', o.label, 60) } : {}),
    ...(o.previousSignRef !== undefined ? { previousSignRef: checkSignRef(o.previousSignRef) } : {}),
  };
}

/**
 * The visible signature box a session draws when the certificate arrives: its placement, and the picture as base64
 * (the record is JSON). Checked whole at start, so a bad picture is refused before the user scans.
 */
export function checkSessionAppearance(v: unknown): SessionAppearance | undefined {
  if (v === undefined) return undefined;
  const placement = checkPlacement(v, 'appearance');
  const image = (v as { image?: unknown }).image;
  if (image !== undefined) {
    if (typeof image !== 'string') throw invalidInput('appearance.image', 'must be a PNG or JPEG as base64');
    readSignatureImage(image);
  }
  return { ...placement, ...(image !== undefined ? { image } : {}) };
}

/** The next signer's box: where the previous one's went, except that a place that was theirs alone (a named field,
 *  a rectangle) becomes the next empty field, or a free corner. */
export function nextSignerAppearance(previous: SessionAppearance | undefined): SessionAppearance | undefined {
  if (!previous) return undefined;
  const { field: _field, rect: _rect, nextEmptyField, ...rest } = previous;
  return previous.field !== undefined || previous.rect ? { ...rest, nextEmptyField: true } : { ...rest, ...(nextEmptyField ? { nextEmptyField } : {}) };
}

/** What the box says for an officer signing for a company. */
export function signingForOf(o: OnBehalfOf | undefined): { entity: string; role?: string } | undefined {
  return o ? { entity: o.entityName ? `${o.entityName} (${o.uen})` : o.uen, role: o.role } : undefined;
}

/**
 * The document name the user sees in the app when signing for a company: the entity and the role, so the user knows
 * in what capacity they sign. Cut to the spec's 255 characters from the document's own name, never from the company.
 */
export function documentNameFor(documentName: string, onBehalfOf?: OnBehalfOf): string {
  const name = checkDocumentName(documentName);
  if (!onBehalfOf) return name;
  const suffix = ` — for ${onBehalfOf.entityName ? `${onBehalfOf.entityName} (${onBehalfOf.uen})` : onBehalfOf.uen} as ${onBehalfOf.role}`;
  const room = 255 - suffix.length;
  if (room < 8) return checkDocumentName(suffix.slice(3));
  return checkDocumentName((name.length > room ? `${name.slice(0, room - 1)}…` : name) + suffix);
}
