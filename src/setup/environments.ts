import { invalidInput } from '../errors';
import { SIGNING_ENVIRONMENTS } from '../sign/environments';

/**
 * Where each service lives for the environment chosen in a front end's settings (n8n credential, Node-RED config
 * node): the public URLs from the core's tables, the sandbox ones from the layout `singpass-flows sandbox` prints.
 * Errors name the setting by key (`sandboxUrl`, `baseUrl`, `keySetUrl`, `issuer`, `environment`); the front end's
 * labels turn those into its own field names (see `inSetting`).
 */
export type SignEnvironmentName = 'staging' | 'production' | 'sandbox' | 'custom';

export interface SignEndpoints {
  baseUrl: string;
  keySetUrl: string;
  /** RFC 3161 timestamp authority for B-T and above, when known. */
  tsaUrl?: string;
  /** Sandbox only: its test root certificate (trust anchor for chains and verification). */
  sandboxRootUrl?: string;
}

const trimSlash = (s: string) => s.trim().replace(/\/+$/, '');

export function signEndpoints(c: { environment?: unknown; sandboxUrl?: unknown; baseUrl?: unknown; keySetUrl?: unknown; tsaUrl?: unknown }): SignEndpoints {
  const tsa = typeof c.tsaUrl === 'string' && c.tsaUrl.trim() ? c.tsaUrl.trim() : undefined;
  switch (c.environment) {
    case 'staging':
    case 'production':
      return { ...SIGNING_ENVIRONMENTS[c.environment], tsaUrl: tsa };
    case 'sandbox': {
      if (typeof c.sandboxUrl !== 'string' || !c.sandboxUrl.trim()) throw invalidInput('sandboxUrl', 'is required for the sandbox environment (e.g. http://127.0.0.1:5156, printed by `singpass-flows sandbox`)');
      const o = trimSlash(c.sandboxUrl);
      return { baseUrl: `${o}/sign/api/v1`, keySetUrl: `${o}/sign/static/.well-known/keys.json`, tsaUrl: tsa ?? `${o}/ca/tsa`, sandboxRootUrl: `${o}/ca/root.crt` };
    }
    case 'custom':
      if (typeof c.baseUrl !== 'string' || !c.baseUrl.trim()) throw invalidInput('baseUrl', 'is required for a custom environment (e.g. https://staging.sign.singpass.gov.sg/api/v1)');
      if (typeof c.keySetUrl !== 'string' || !c.keySetUrl.trim()) throw invalidInput('keySetUrl', 'is required for a custom environment (the service\'s /.well-known/keys.json)');
      return { baseUrl: c.baseUrl.trim(), keySetUrl: c.keySetUrl.trim(), tsaUrl: tsa };
    default:
      throw invalidInput('environment', `"${String(c.environment)}" is not one of staging, production, sandbox, custom`);
  }
}

export type LoginProvider = 'corppass' | 'singpass';

/** Issuers as the providers publish them. */
const LOGIN_ISSUERS: Record<LoginProvider, { staging: string; production: string; sandboxPath: string }> = {
  corppass: { staging: 'https://stg-id.corppass.gov.sg', production: 'https://id.corppass.gov.sg', sandboxPath: '/corppass' },
  singpass: { staging: 'https://stg-id.singpass.gov.sg/fapi', production: 'https://id.singpass.gov.sg/fapi', sandboxPath: '/singpass/fapi' },
};
/** Corppass FAPI 2.0 shares the legacy hosts (as Corppass publishes them); only the sandbox mounts it apart. */
const CORPPASS_FAPI_SANDBOX_PATH = '/corppass-fapi';

export function loginIssuer(provider: LoginProvider, c: { environment?: unknown; sandboxUrl?: unknown; issuer?: unknown; profile?: unknown }): { issuer: string; loopback: boolean } {
  const table = LOGIN_ISSUERS[provider];
  const sandboxPath = provider === 'corppass' && c.profile === 'fapi' ? CORPPASS_FAPI_SANDBOX_PATH : table.sandboxPath;
  switch (c.environment) {
    case 'staging':
    case 'production':
      return { issuer: table[c.environment], loopback: false };
    case 'sandbox':
      if (typeof c.sandboxUrl !== 'string' || !c.sandboxUrl.trim()) throw invalidInput('sandboxUrl', 'is required for the sandbox environment (e.g. http://127.0.0.1:5156)');
      return { issuer: `${trimSlash(c.sandboxUrl)}${sandboxPath}`, loopback: true };
    case 'custom':
      if (typeof c.issuer !== 'string' || !c.issuer.trim()) throw invalidInput('issuer', 'is required for a custom environment (exactly as the provider publishes it)');
      return { issuer: c.issuer.trim(), loopback: false };
    default:
      throw invalidInput('environment', `"${String(c.environment)}" is not one of staging, production, sandbox, custom`);
  }
}
