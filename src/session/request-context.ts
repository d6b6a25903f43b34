import { invalidInput } from '../errors';
import type { OnBehalfOf } from '../login/officer';
import { DECEPTIVE_CHARS, checkDocumentName, checkSignRef } from '../sign/validate';
import type { SignerPlace } from './types';

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
