import { CORPPASS_SUB_KEYS } from './wire';

/** A Corppass user as named by the ID token `sub` (`s=S1234567A,uuid=…,u=CP192,c=SG`; fields vary by user type). */
export interface CorppassSubject {
  /** The `sub` claim as sent: use it as the stable key, and as `expectedSub` for authorization info. */
  raw: string;
  /** NRIC or FIN (`s`); absent for foreign users. Never inferred from its shape. */
  nric?: string;
  uuid?: string;
  /** Corppass user id (`u`). */
  userId?: string;
  /** Country (`c`). */
  country?: string;
  /** Every key=value pair, including ones this version does not know. */
  attributes: Record<string, string>;
}

/** Parse the `sub` as comma-separated key=value pairs (never by NRIC pattern: new FIN series broke such helpers). */
export function parseCorppassSubject(sub: string): CorppassSubject {
  const attributes: Record<string, string> = {};
  for (const part of sub.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key && !(key in attributes)) attributes[key] = value;
  }
  const out: CorppassSubject = { raw: sub, attributes };
  for (const [key, name] of Object.entries(CORPPASS_SUB_KEYS)) {
    if (attributes[key]) out[name] = attributes[key];
  }
  return out;
}
