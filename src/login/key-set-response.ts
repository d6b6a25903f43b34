import type { JWK } from 'jose';
import { publicKeySet, type LoadedKey } from '../keys';

/** An HTTP answer either engine's endpoint node can return as-is. */
export interface KeySetHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The answer for the client's JWKS URL (registered with Singpass/Corppass; they fetch it to verify our assertions
 * and to encrypt ID tokens to us). Only public members are ever published; duplicate kids are refused.
 *
 * @example
 * // n8n Webhook node / Node-RED http-in on GET /jwks:
 * const { status, headers, body } = keySetResponse([signingKey, encryptionKey]);
 */
export function keySetResponse(keys: Array<Pick<LoadedKey, 'publicJwk'>> | { keys: JWK[] }): KeySetHttpResponse {
  const set = Array.isArray(keys) ? publicKeySet(keys) : publicKeySet(keys.keys.map((publicJwk) => ({ publicJwk })));
  return {
    status: 200,
    headers: { 'content-type': 'application/jwk-set+json; charset=utf-8', 'cache-control': 'public, max-age=300' },
    body: JSON.stringify(set),
  };
}
