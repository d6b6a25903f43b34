import type { ICredentialDataDecryptedObject, INode } from 'n8n-workflow';
import type { EcSigningAlg, LoadedKey } from '../../src/keys';
import type { CorppassClient, CorppassFapiClient, LoginClientOptions } from '../../src/login';
import {
  corppassLoginClient as coreCorppassLoginClient, inSetting, loginOptions as coreLoginOptions, signSetup as coreSignSetup,
  type CorppassProfileSettings, type LoginProvider, type SettingLabels, type SignSetup,
} from '../../src/setup';

export type { CorppassProfileSettings, SignSetup };
export type SignKey = LoadedKey<EcSigningAlg>;

/** Credential type names (n8n requires the `Api` suffix). */
export const CREDENTIAL = {
  sign: 'singpassSignApi',
  notificationToken: 'singpassNotificationTokenApi',
  corppass: 'corppassApi',
  singpassLogin: 'singpassLoginApi',
} as const;

const CREDENTIAL_TITLE: Record<string, string> = {
  singpassSignApi: 'Singpass Sign API',
  singpassNotificationTokenApi: 'Singpass Notification Token Secret',
  corppassApi: 'Corppass',
  singpassLoginApi: 'Singpass Login',
};

/** The n8n credentials' field labels for the core's setting keys (what the user sees in the credential form). */
const FIELD_LABELS: Record<string, string> = {
  environment: 'Environment', sandboxUrl: 'Sandbox URL', baseUrl: 'API Base URL', keySetUrl: 'Service Key Set URL', tsaUrl: 'TSA URL',
  clientId: 'Client ID', signingKey: 'Signing Key', encryptionKey: 'Encryption Key', trustedRoots: 'Trusted Root Certificates',
  transactionSecret: 'Transaction Secret', issuer: 'Issuer', redirectUri: 'Redirect URI', profile: 'Profile', appType: 'App Type', secret: 'Secret',
  audience: 'Assertion Audience',
};

/** How the core names a credential's fields in its messages: `Credential "<title>", field "<label>"`. */
export function credentialLabels(credential: string): SettingLabels {
  const fields = credential === CREDENTIAL.sign ? { ...FIELD_LABELS, signingKey: 'DSAP Signing Key' } : FIELD_LABELS;
  return { where: `Credential "${CREDENTIAL_TITLE[credential] ?? credential}"`, fields };
}

/**
 * Re-throw a key or setting error with the credential and field named, so a low-code user knows which box to fix.
 * The core's code is kept.
 */
export function inCredential<T>(credential: string, field: string, run: () => T): T {
  return inSetting({ where: credentialLabels(credential).where, fields: { [field]: field } }, field, run);
}

/** Everything the signing operations need from a "Singpass Sign API" credential, checked (the core's signSetup). */
export function signSetup(c: ICredentialDataDecryptedObject): Promise<SignSetup> {
  return coreSignSetup(c, credentialLabels(CREDENTIAL.sign));
}

const loginCredential = (provider: LoginProvider) => (provider === 'corppass' ? CREDENTIAL.corppass : CREDENTIAL.singpassLogin);

/** Client options for the Corppass or Singpass login client from its credential. */
export function loginOptions(provider: LoginProvider, c: ICredentialDataDecryptedObject): Promise<LoginClientOptions & { transactionSecret: string }> {
  return coreLoginOptions(provider, c, credentialLabels(loginCredential(provider)));
}

/** The client's public keys (signing + encryption) from a login credential, for its published key set. */
export async function loginPublicKeys(provider: LoginProvider, c: ICredentialDataDecryptedObject): Promise<LoadedKey[]> {
  const o = await loginOptions(provider, c);
  return [o.signingKey, ...o.decryptionKeys];
}

/** The Corppass client for the chosen profile (the credential's "Profile", "App Type"). */
export function corppassLoginClient(options: LoginClientOptions, s: CorppassProfileSettings): CorppassClient | CorppassFapiClient {
  return coreCorppassLoginClient(options, s, credentialLabels(CREDENTIAL.corppass));
}

/** How long a credential read is reused in one process (a changed credential takes effect within this). */
export const CREDENTIAL_REUSE_MS = 30_000;
const reads = new Map<string, { at: number; data: Promise<ICredentialDataDecryptedObject> }>();

/**
 * A node's credential, read from n8n at most once per {@link CREDENTIAL_REUSE_MS} per process and credential id.
 * Why: n8n 2.41's default expression engine (`vm`) builds, loads and disposes a fresh V8 isolate for every
 * credential read, and the Sign Trigger read three per delivery in the webhook process — one thread that must answer
 * the signing service within 2 s; with two workers on 2 cores its answers queued past that and sessions were lost
 * (docs/benchmarks.md, n8n queue mode).
 * Reused per credential id (n8n's own, from the node), so two credentials never share a read; a node without ids (a
 * test's mock) reads every time. Failed reads are not kept.
 */
export async function nodeCredential(ctx: { getNode(): INode; getCredentials(type: string, itemIndex?: number): Promise<ICredentialDataDecryptedObject> }, type: string, itemIndex?: number): Promise<ICredentialDataDecryptedObject> {
  const id = ctx.getNode().credentials?.[type]?.id;
  if (!id) return ctx.getCredentials(type, itemIndex);
  const key = `${type}/${id}`;
  const now = Date.now();
  const kept = reads.get(key);
  if (kept && now - kept.at < CREDENTIAL_REUSE_MS) return kept.data;
  const data = ctx.getCredentials(type, itemIndex);
  reads.set(key, { at: now, data });
  data.catch(() => reads.get(key)?.data === data && reads.delete(key));
  return data;
}
