import { invalidInput } from '../errors';
import { API_PREFIX } from './wire';

/** Where the signing API and its key set live, per environment. */
export interface SigningEnvironment {
  /** `baseUrl` for {@link SigningApiClient}: `{dss_base_url}/api/v1`. */
  baseUrl: string;
  /** `keySetUrl` for `createWebhookVerifier`: `{dss_static_url}/.well-known/keys.json`. */
  keySetUrl: string;
}

/**
 * The public Singpass signing environments ([C]: published by Singpass), so a low-code user picks "staging" or
 * "production" instead of pasting URLs. For the local sandbox use its printed `signApi` / `signKeys` URLs.
 *
 * @example new SigningApiClient({ ...SIGNING_ENVIRONMENTS.staging, clientId, signingKey })
 */
export const SIGNING_ENVIRONMENTS: Readonly<Record<'staging' | 'production', SigningEnvironment>> = Object.freeze({
  staging: {
    baseUrl: `https://staging.sign.singpass.gov.sg${API_PREFIX}`,
    keySetUrl: 'https://static.staging.sign.singpass.gov.sg/.well-known/keys.json',
  },
  production: {
    baseUrl: `https://app.sign.singpass.gov.sg${API_PREFIX}`,
    keySetUrl: 'https://static.app.sign.singpass.gov.sg/.well-known/keys.json',
  },
});

/** The environment a user picked by name (`staging` or `production`); any other name is an error naming the setting. */
export function signingEnvironment(name: unknown): SigningEnvironment {
  if (name === 'staging' || name === 'production') return SIGNING_ENVIRONMENTS[name];
  throw invalidInput('environment', `must be "staging" or "production" (for the local sandbox give its URLs instead), got ${typeof name === 'string' ? `"${name.slice(0, 40)}"` : typeof name}`);
}
