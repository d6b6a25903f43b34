import { createHash } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { SingpassFlowsError } from '../errors';
import type { KeySource, LoadedKey } from '../keys';
import { decryptAndVerify } from './nested-jwt';
import type { LoginTransaction } from './transaction';
import { constantTimeEqual } from '../secrets';

/** ID tokens are used right after issuance; an older `iat` means a replayed or stale token (checklist item 48). */
export const ID_TOKEN_MAX_AGE_SECONDS = 600;

/**
 * Decrypt and verify an ID token for this login: signature from the provider keys (ES256), iss, exp, iat (present,
 * not in the future, not older than 10 minutes), `aud` exactly our client id (an extra audience is refused), `azp`
 * if present equal to our client id, `sub` a non-empty string, `nonce` equal to this login's nonce, `at_hash` if
 * present the hash of the access token that came with it (OIDC Core 3.1.3.8; an absent one is accepted).
 */
export async function verifyIdToken(idToken: string, o: {
  tx: LoginTransaction; clientId: string; issuer: string; decryptionKeys: LoadedKey[]; encs: readonly string[]; keySet: KeySource; clock: () => number;
  /** The access token of the same token response, for `at_hash`. */
  accessToken: string;
}): Promise<JWTPayload & { sub: string }> {
  const { payload, jwsHeader } = await decryptAndVerify(idToken, {
    decryptionKeys: o.decryptionKeys, encs: o.encs, keySet: o.keySet, issuer: o.issuer, audience: o.clientId, clock: o.clock,
    errorCode: 'ID_TOKEN_INVALID', what: 'ID token', requiredClaims: ['iss', 'aud', 'sub', 'nonce'], maxAgeSeconds: ID_TOKEN_MAX_AGE_SECONDS,
  });
  const fail = (msg: string) => new SingpassFlowsError('ID_TOKEN_INVALID', `The ID token ${msg}`);
  const aud = payload.aud;
  if (!(aud === o.clientId || (Array.isArray(aud) && aud.length === 1 && aud[0] === o.clientId))) throw fail('is also addressed to other parties (extra "aud" values); refusing it');
  if (payload.azp !== undefined && payload.azp !== o.clientId) throw fail('names another authorized party ("azp")');
  if (typeof payload.sub !== 'string' || !payload.sub) throw fail('has no subject ("sub")');
  if (typeof payload.nonce !== 'string' || !constantTimeEqual(payload.nonce, o.tx.nonce)) throw fail('does not belong to this login ("nonce" differs); it may be replayed');
  if (payload.at_hash !== undefined && (typeof payload.at_hash !== 'string' || !constantTimeEqual(payload.at_hash, accessTokenHash(o.accessToken, jwsHeader.alg)))) {
    throw fail('was not issued with this access token ("at_hash" differs); a substituted token');
  }
  return payload as JWTPayload & { sub: string };
}

/** Hash of each ID-token signing algorithm (the providers use ES256 only: PROVIDER_SIGNING_ALGS). */
const HASH_OF_ALG: Readonly<Record<string, string>> = { ES256: 'sha256', ES384: 'sha384', ES512: 'sha512' };

/** `at_hash`: base64url of the left-most half of the access token's hash, by the ID token's `alg` (OIDC Core 3.1.3.6). */
export function accessTokenHash(accessToken: string, alg: unknown): string {
  const hash = typeof alg === 'string' ? HASH_OF_ALG[alg] : undefined;
  if (!hash) throw new SingpassFlowsError('ID_TOKEN_INVALID', `The ID token is signed with "${String(alg)}", for which "at_hash" cannot be checked`);
  const digest = createHash(hash).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
