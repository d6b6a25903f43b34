import { signClientAssertion, type LoadedKey, type EcSigningAlg } from '../keys';
import { CLIENT_ASSERTION_TYPE } from './wire';

/**
 * `private_key_jwt` client assertion (RFC 7523) as Singpass and Corppass want it: `typ: JWT`, the key's `kid`,
 * iss = sub = client id, `aud` = the issuer identifier as a plain string (not the endpoint URL, not an array),
 * a fresh `jti` per request (also for DPoP-nonce retries) and a short lifetime.
 */
export async function clientAssertionParams(key: LoadedKey<EcSigningAlg>, clientId: string, issuer: string, clock: () => number): Promise<Record<string, string>> {
  const assertion = await signClientAssertion({ clientId, key, audience: issuer, clock });
  return { client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertion };
}

