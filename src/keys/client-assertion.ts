import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { invalidInput } from '../errors';
import { epochSeconds, systemClock, type Clock } from '../clock';
import type { LoadedKey } from './load';

export interface ClientAssertionOptions {
  /** Client ID given at onboarding: becomes both `iss` and `sub`. */
  clientId: string;
  /** An EC signing key from `loadSigningKey`; its `kid` must be in the key set registered with the service. */
  key: LoadedKey;
  /** Who accepts it: the signing API's domain, or the login provider's issuer identifier (a plain string). */
  audience: string;
  /** `typ` header (default `JWT`). */
  typ?: string;
  /** Seconds until `exp`: 1..`maxLifetimeSeconds`, default 60 (the services refuse longer-lived assertions). */
  lifetimeSeconds?: number;
  /** The accepting service's cap on `exp - iat` (default 120 s); a protocol with its own cap passes it here. */
  maxLifetimeSeconds?: number;
  clock?: Clock;
}

const DEFAULT_MAX_LIFETIME_S = 120;

/**
 * The short-lived JWT by which this client proves who it is — the signing API's `X-Dss-Assertion` and the login
 * providers' `private_key_jwt` share this shape: header typ/alg/kid, claims iss = sub = client id, aud, iat, exp,
 * and a fresh UUIDv4 `jti`. The services cache `jti`s and refuse repeats, so build one per request (retries too).
 */
export async function signClientAssertion(options: ClientAssertionOptions): Promise<string> {
  const { clientId, key, audience } = options;
  if (typeof clientId !== 'string' || clientId.trim() === '') throw invalidInput('clientId', 'is required (the client ID given at onboarding)');
  if (typeof audience !== 'string' || audience === '') throw invalidInput('audience', 'is required');
  if (key?.use !== 'sig') throw invalidInput('key', 'must be a signing key loaded with loadSigningKey()');
  const lifetime = options.lifetimeSeconds ?? 60;
  const max = options.maxLifetimeSeconds ?? DEFAULT_MAX_LIFETIME_S;
  if (!Number.isInteger(lifetime) || lifetime < 1 || lifetime > max) {
    throw invalidInput('lifetimeSeconds', `must be a whole number from 1 to ${max}`);
  }
  const iat = epochSeconds(options.clock ?? systemClock);
  return new SignJWT({})
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: options.typ ?? 'JWT' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetime)
    .setJti(randomUUID())
    .sign(key.privateKey);
}
