import { generateKeyPairSync } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { SingpassFlowsError } from '../errors';
import type { LoadedKey } from './load';

/** The client's own keys, as generated for onboarding: private JWKs for credentials, public set to register. */
export interface ClientKeys {
  signing: JWK;
  encryption: JWK;
  publicKeySet: { keys: JWK[] };
}

/**
 * Generate a signing key (ES256) and an encryption key (ECDH-ES+A256KW) on P-256 — the curve every peer accepts
 * (openid-client decrypts only P-256; MockPass defaults to P-521, which Singpass does not need).
 */
export async function generateClientKeys(): Promise<ClientKeys> {
  const signing = await privateJwk('sig', 'ES256');
  const encryption = await privateJwk('enc', 'ECDH-ES+A256KW');
  return { signing, encryption, publicKeySet: { keys: [publicOnly(signing), publicOnly(encryption)] } };
}

/**
 * The public key set to publish at the client's JWKS URL (Singpass and Corppass fetch it). Refuses ambiguous sets:
 * duplicate `kid`s or one key published for both signing and encryption.
 */
export function publicKeySet(keys: Array<Pick<LoadedKey, 'publicJwk'>>): { keys: JWK[] } {
  const seen = new Map<string, string>();
  const out: JWK[] = [];
  for (const { publicJwk } of keys) {
    const jwk = publicOnly(publicJwk);
    const kid = jwk.kid ?? '';
    if (seen.has(kid)) throw new SingpassFlowsError('KEY_INVALID', `Two keys share the key ID "${kid}"; every published key needs its own kid`);
    const material = `${jwk.crv}:${jwk.x}:${jwk.y}`;
    if ([...seen.values()].includes(material)) throw new SingpassFlowsError('KEY_INVALID', 'The same key is published twice (e.g. for both signing and encryption); use separate keys');
    seen.set(kid, material);
    out.push(jwk);
  }
  return { keys: out };
}

/** Strip every private member (d, and RSA's p/q/dp/dq/qi/oth, and symmetric k). */
export function publicOnly(jwk: JWK): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, k: _k, ...pub } = jwk as JWK & Record<string, unknown>;
  return pub;
}

async function privateJwk(use: 'sig' | 'enc', alg: string): Promise<JWK> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' }) as JWK;
  const kid = `${use}-${(await calculateJwkThumbprint({ kty: 'EC', crv: jwk.crv!, x: jwk.x!, y: jwk.y! })).slice(0, 16)}`;
  return { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y, d: jwk.d, kid, use, alg };
}
