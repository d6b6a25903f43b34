import { SignJWT } from 'jose';
import type { LoadedKey, EcSigningAlg } from '../keys';
import { CLIENT_ASSERTION_TYPE } from './wire';
import { nowSeconds, randomToken } from './util';

/**
 * `private_key_jwt` client assertion (RFC 7523) as Singpass and Corppass want it: `typ: JWT`, the key's `kid`,
 * iss = sub = client id, `aud` = the issuer identifier as a plain string (not the endpoint URL, not an array),
 * a fresh `jti` per request (also for DPoP-nonce retries) and a short lifetime.
 */
export async function clientAssertionParams(key: LoadedKey<EcSigningAlg>, clientId: string, issuer: string, clock: () => number): Promise<Record<string, string>> {
  const now = nowSeconds(clock);
  const assertion = await new SignJWT({})
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(issuer)
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .setJti(randomToken())
    .sign(key.privateKey);
  return { client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertion };
}

