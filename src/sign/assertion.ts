import type { Clock } from '../clock';
import { signClientAssertion, type LoadedKey } from '../keys';
import { ASSERTION_MAX_LIFETIME_S, ASSERTION_TYP } from './wire';

export interface DssAssertionOptions {
  /** Client ID given by the service at onboarding (becomes `iss` and `sub`). */
  clientId: string;
  /** The DSAP's EC signing key; its `kid` must be in the key set registered with the service. */
  key: LoadedKey;
  /** The signing API's domain (see `defaultAudience` in wire.ts). */
  audience: string;
  clock?: Clock;
  /** Seconds until `exp`; 1..120, default 60. */
  lifetimeSeconds?: number;
}

/**
 * Build the `X-Dss-Assertion` JWT for ONE call. The service caches `jti`s and rejects duplicates, so every call
 * needs a fresh assertion — including retries; never cache the result.
 *
 * @example
 * const jwt = await createDssAssertion({ clientId: 'my-dsap', key: await loadSigningKey({ key: pem }), audience: 'https://staging.sign.singpass.gov.sg' });
 */
export async function createDssAssertion(options: DssAssertionOptions): Promise<string> {
  return signClientAssertion({ ...options, maxLifetimeSeconds: ASSERTION_MAX_LIFETIME_S, typ: ASSERTION_TYP });
}
