import { SingpassFlowsError, isSingpassFlowsError } from '../errors';
import { loadEncryptionKey, loadSigningKey, type LoadedKey } from '../keys';
import { createCorppassClient, type CorppassAppType, type CorppassClient, type CorppassFapiClient, type LoginClientOptions } from '../login';
import { loginIssuer, type LoginProvider } from './environments';
import { inSetting, type SettingLabels } from './labels';

/**
 * The settings a login front end collects (n8n: the Corppass / Singpass Login credential; Node-RED: the login client
 * config node), by key: `environment`, `sandboxUrl`, `issuer`, `clientId`, `redirectUri`, `signingKey`,
 * `encryptionKey`, `transactionSecret`, and for Corppass `profile`, `appType`.
 */
export type LoginSettings = Readonly<Record<string, unknown>>;

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Client options for the Corppass or Singpass login client, checked, each error naming the field to fix. */
export async function loginOptions(provider: LoginProvider, settings: LoginSettings, labels: SettingLabels): Promise<LoginClientOptions & { transactionSecret: string }> {
  const { issuer, loopback } = inSetting(labels, 'environment', () => loginIssuer(provider, settings));
  const signingKey = await inSetting(labels, 'signingKey', () => loadSigningKey({ key: text(settings.signingKey) }));
  const encryptionKey = await inSetting(labels, 'encryptionKey', () => loadEncryptionKey({ key: text(settings.encryptionKey) }));
  const transactionSecret = text(settings.transactionSecret);
  if (Buffer.byteLength(transactionSecret, 'utf8') < 32) {
    inSetting(labels, 'transactionSecret', () => {
      throw new SingpassFlowsError('INVALID_INPUT', 'use at least 32 characters (e.g. `openssl rand -base64 32`)', { field: 'transactionSecret' });
    });
  }
  return {
    issuer, clientId: text(settings.clientId), signingKey, decryptionKeys: [encryptionKey], redirectUri: text(settings.redirectUri),
    allowInsecureLoopback: loopback, transactionSecret,
  };
}

/** The client's public keys (signing + encryption) from login settings, for its published key set. */
export async function loginPublicKeys(provider: LoginProvider, settings: LoginSettings, labels: SettingLabels): Promise<LoadedKey[]> {
  const o = await loginOptions(provider, settings, labels);
  return [o.signingKey, ...o.decryptionKeys];
}

/** The Corppass profile settings ("profile", "appType"), as entered. */
export interface CorppassProfileSettings { profile?: unknown; appType?: unknown }

/**
 * The Corppass client for the chosen profile. No profile (settings saved before the field existed) stays legacy; the
 * core checks the values, and an error names the field to fix.
 */
export function corppassLoginClient(options: LoginClientOptions, s: CorppassProfileSettings, labels: SettingLabels): CorppassClient | CorppassFapiClient {
  const profile = text(s.profile).trim() || 'legacy';
  try {
    return profile === 'fapi'
      ? createCorppassClient({ ...options, profile: 'fapi', appType: (text(s.appType).trim() || 'login') as CorppassAppType })
      : createCorppassClient({ ...options, profile: profile as 'legacy' });
  } catch (e) {
    // A profile error names the profile field; other settings' errors keep their own names.
    const key = isSingpassFlowsError(e) ? String(e.details?.field) : '';
    if (key !== 'profile' && key !== 'appType') throw e;
    return inSetting(labels, key, () => { throw e; });
  }
}
