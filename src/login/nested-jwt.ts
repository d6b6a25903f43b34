import { compactDecrypt, decodeProtectedHeader, type JWEHeaderParameters, type JWTPayload } from 'jose';
import { SingpassFlowsError, type ErrorCode } from '../errors';
import type { KeySource, LoadedKey } from '../keys';
import { verifyJwsWithKeySet } from '../keys';
import { JWE_KEY_ALGS, PROVIDER_SIGNING_ALGS } from './wire';

export interface NestedJwtOptions {
  /** Our decryption keys (current and, during a rotation, previous). */
  decryptionKeys: LoadedKey[];
  /** Allowed JWE `enc` values. */
  encs: readonly string[];
  keySet: KeySource;
  issuer: string;
  audience: string;
  clock: () => number;
  errorCode: ErrorCode;
  what: string;
  requiredClaims?: string[];
  expOptional?: boolean;
  maxAgeSeconds?: number;
  /** Also accept a bare JWS from the provider (Corppass FAPI userinfo: its docs say JWS, other notes JWE). */
  allowSignedOnly?: boolean;
}

/** JOSE `typ` values of other token kinds: one of them presented as an ID token or userinfo is refused. */
const FOREIGN_TYPS = ['dpop+jwt', 'at+jwt', 'logout+jwt', 'secevent+jwt'];

/**
 * Decrypt a JWE addressed to us and verify the JWS inside it. Both layers are mandatory: the providers always
 * encrypt (a bare JWS is a downgrade), and anyone can encrypt to our public key, so the inner signature from the
 * provider's key set is what proves origin. Algorithms are allow-listed before any key is touched.
 */
export async function decryptAndVerify(token: unknown, o: NestedJwtOptions): Promise<{ payload: JWTPayload; jwsHeader: Record<string, unknown> }> {
  const fail = (msg: string, cause?: unknown) => new SingpassFlowsError(o.errorCode, `The ${o.what} ${msg}`, {}, cause ? { cause } : undefined);
  if (typeof token !== 'string' || !token) throw fail('is missing');
  const parts = token.split('.');
  if (parts.length === 3) {
    if (o.allowSignedOnly) return verifyInner(token, o);
    throw fail('arrived signed but not encrypted; the provider always encrypts it, so this is refused');
  }
  if (parts.length !== 5) throw fail('is not an encrypted token (JWE compact form has five parts)');
  let header: JWEHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch (e) {
    throw fail('has an unreadable header', e);
  }
  if (!header.alg || !(JWE_KEY_ALGS as readonly string[]).includes(header.alg)) throw fail(`is encrypted with "${header.alg}", which is not accepted (allowed: ${JWE_KEY_ALGS.join(', ')})`);
  if (!header.enc || !o.encs.includes(header.enc)) throw fail(`uses content encryption "${header.enc}", which is not accepted (allowed: ${o.encs.join(', ')})`);
  if ('zip' in header) throw fail('is compressed ("zip"), which is refused');
  const candidates = o.decryptionKeys.filter((k) => k.use === 'enc');
  const key = header.kid === undefined
    ? (candidates.length === 1 ? candidates[0] : undefined)
    : candidates.find((k) => k.kid === header.kid);
  if (!key) {
    throw fail(header.kid === undefined
      ? 'names no key (kid) and more than one decryption key is configured'
      : `is encrypted to key "${header.kid}", which is not one of the configured decryption keys (was it rotated out too early?)`);
  }
  const epk = header.epk as { kty?: string; crv?: string } | undefined;
  if (!epk || epk.kty !== 'EC' || epk.crv !== key.crv) throw fail(`carries an ephemeral key on another curve than the decryption key (${key.crv})`);
  let inner: string;
  try {
    const { plaintext } = await compactDecrypt(token, key.privateKey, { keyManagementAlgorithms: [...JWE_KEY_ALGS], contentEncryptionAlgorithms: [...o.encs] });
    inner = new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch (e) {
    throw fail('cannot be decrypted (altered, or not encrypted to our key)', e);
  }
  return verifyInner(inner, o);
}

/** The signed layer: a token of the expected kind, no repeated claim names, signature and claims from the provider keys. */
async function verifyInner(inner: string, o: NestedJwtOptions): Promise<{ payload: JWTPayload; jwsHeader: Record<string, unknown> }> {
  const fail = (msg: string, cause?: unknown) => new SingpassFlowsError(o.errorCode, `The ${o.what} ${msg}`, {}, cause ? { cause } : undefined);
  let jwsHeader: Record<string, unknown>;
  try {
    jwsHeader = decodeProtectedHeader(inner);
  } catch (e) {
    throw fail('does not contain a signed JWT', e);
  }
  if (typeof jwsHeader.typ === 'string' && FOREIGN_TYPS.includes(jwsHeader.typ.toLowerCase())) throw fail(`contains a "${jwsHeader.typ}" token, not an ${o.what}`);
  refuseRepeatedClaims(inner, o.errorCode, o.what);
  const { payload } = await verifyJwsWithKeySet(inner, o.keySet, {
    algorithms: [...PROVIDER_SIGNING_ALGS],
    issuer: o.issuer,
    audience: o.audience,
    requiredClaims: o.requiredClaims,
    expOptional: o.expOptional,
    maxAgeSeconds: o.maxAgeSeconds,
    clock: o.clock,
    errorCode: o.errorCode,
    what: o.what,
  });
  return { payload, jwsHeader };
}

/** Refuse a compact JWS whose payload repeats a claim name, before its signature is checked (checklist item 52). */
export function refuseRepeatedClaims(jws: string, errorCode: ErrorCode, what: string): void {
  if (hasDuplicateMembers(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8'))) {
    throw new SingpassFlowsError(errorCode, `The ${what} repeats a claim name (ambiguous JSON); refusing it`);
  }
}

/**
 * True when some JSON object repeats a member name. JSON.parse silently keeps the last one, so a token could show
 * one `iss` to a strict parser and another to us (RFC 8725 §3.12 / checklist item 52).
 */
export function hasDuplicateMembers(json: string): boolean {
  const stack: Array<Set<string> | null> = []; // one entry per open object (its keys) or array (null)
  let i = 0;
  while (i < json.length) {
    const ch = json[i];
    if (ch === '"') {
      let j = i + 1;
      while (j < json.length && json[j] !== '"') j += json[j] === '\\' ? 2 : 1;
      const raw = json.slice(i, j + 1);
      i = j + 1;
      let k = i;
      while (k < json.length && (json[k] === ' ' || json[k] === '\t' || json[k] === '\n' || json[k] === '\r')) k++;
      const keys = stack[stack.length - 1];
      if (json[k] === ':' && keys) {
        let key: string;
        try {
          key = JSON.parse(raw) as string;
        } catch {
          return true; // unreadable member name: treat as ambiguous
        }
        if (keys.has(key)) return true;
        keys.add(key);
      }
      continue;
    }
    if (ch === '{') stack.push(new Set());
    else if (ch === '[') stack.push(null);
    else if (ch === '}' || ch === ']') stack.pop();
    i++;
  }
  return false;
}
