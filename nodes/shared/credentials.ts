import type { ICredentialDataDecryptedObject } from 'n8n-workflow';
import { SingpassFlowsError, isSingpassFlowsError } from '../../src/errors';
import { httpRequest } from '../../src/http';
import { loadEncryptionKey, loadSigningKey, type EcSigningAlg, type LoadedKey } from '../../src/keys';
import { createCorppassClient, type CorppassAppType, type CorppassClient, type CorppassFapiClient, type LoginClientOptions } from '../../src/login';
import { certsFromPemOrDer } from '../../src/pki';
import { SigningApiClient } from '../../src/sign/client';
import { loginIssuer, signEndpoints, type LoginProvider, type SignEndpoints } from './environments';

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

/**
 * Re-throw a key or setting error with the credential and field named, so a low-code user knows which box to fix.
 * The core's code is kept.
 */
export function inCredential<T>(credential: string, field: string, run: () => T): T {
  const wrap = (e: unknown): never => {
    if (!isSingpassFlowsError(e)) throw e;
    throw new SingpassFlowsError(e.code, `Credential "${CREDENTIAL_TITLE[credential] ?? credential}", field "${field}": ${e.message}`, { ...e.details, field }, { cause: e });
  };
  try {
    const out = run();
    return (out instanceof Promise ? out.catch(wrap) : out) as T;
  } catch (e) {
    return wrap(e);
  }
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

export interface SignSetup {
  endpoints: SignEndpoints;
  signingKey: LoadedKey<EcSigningAlg>;
  client: SigningApiClient;
  /** Trust anchors for chains, status checks and verification (the sandbox's root is fetched). */
  trustedRoots(): Promise<Buffer[]>;
}

/** Everything the signing operations need from a "Singpass Sign API" credential, checked. */
export async function signSetup(c: ICredentialDataDecryptedObject): Promise<SignSetup> {
  const endpoints = inCredential(CREDENTIAL.sign, 'Environment', () => signEndpoints(c));
  const signingKey = await inCredential(CREDENTIAL.sign, 'DSAP Signing Key', () => loadSigningKey({ key: text(c.signingKey) }));
  const client = inCredential(CREDENTIAL.sign, 'Client ID', () => new SigningApiClient({ baseUrl: endpoints.baseUrl, clientId: text(c.clientId), signingKey }));
  return { endpoints, signingKey, client, trustedRoots: () => trustedRoots(c, endpoints) };
}

/** Sandbox roots by URL: fetched once per process (an optimisation; refetched after a restart). */
const sandboxRoots = new Map<string, Buffer[]>();

async function trustedRoots(c: ICredentialDataDecryptedObject, e: SignEndpoints): Promise<Buffer[]> {
  const pasted = text(c.trustedRoots).trim();
  const roots = pasted ? inCredential(CREDENTIAL.sign, 'Trusted Root Certificates', () => parseRoots(pasted)) : [];
  if (e.sandboxRootUrl) {
    let sb = sandboxRoots.get(e.sandboxRootUrl);
    if (!sb) {
      const res = await httpRequest(e.sandboxRootUrl, { method: 'GET' });
      if (res.status !== 200) throw new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', `The sandbox root certificate (${e.sandboxRootUrl}) answered HTTP ${res.status}; is the sandbox running?`, { status: res.status });
      sb = certsFromPemOrDer(res.body);
      sandboxRoots.set(e.sandboxRootUrl, sb);
    }
    roots.push(...sb);
  }
  return roots;
}

function parseRoots(pem: string): Buffer[] {
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new SingpassFlowsError('INVALID_INPUT', 'paste one or more PEM certificates ("-----BEGIN CERTIFICATE-----" blocks)');
  }
  return certsFromPemOrDer(pem);
}

/** Client options for the Corppass or Singpass login client from its credential. */
export async function loginOptions(provider: LoginProvider, c: ICredentialDataDecryptedObject): Promise<LoginClientOptions & { transactionSecret: string }> {
  const credential = provider === 'corppass' ? CREDENTIAL.corppass : CREDENTIAL.singpassLogin;
  const { issuer, loopback } = inCredential(credential, 'Environment', () => loginIssuer(provider, c));
  const signingKey = await inCredential(credential, 'Signing Key', () => loadSigningKey({ key: text(c.signingKey) }));
  const encryptionKey = await inCredential(credential, 'Encryption Key', () => loadEncryptionKey({ key: text(c.encryptionKey) }));
  const transactionSecret = text(c.transactionSecret);
  if (Buffer.byteLength(transactionSecret, 'utf8') < 32) {
    throw new SingpassFlowsError('INVALID_INPUT', `Credential "${CREDENTIAL_TITLE[credential]}", field "Transaction Secret": use at least 32 characters (e.g. \`openssl rand -base64 32\`)`, { field: 'Transaction Secret' });
  }
  return {
    issuer, clientId: text(c.clientId), signingKey, decryptionKeys: [encryptionKey], redirectUri: text(c.redirectUri),
    allowInsecureLoopback: loopback, transactionSecret,
  };
}

/** The client's public keys (signing + encryption) from a login credential, for its published key set. */
export async function loginPublicKeys(provider: LoginProvider, c: ICredentialDataDecryptedObject): Promise<LoadedKey[]> {
  const o = await loginOptions(provider, c);
  return [o.signingKey, ...o.decryptionKeys];
}

/** The Corppass profile settings of a credential / config node ("Profile", "App Type"). */
export interface CorppassProfileSettings { profile?: unknown; appType?: unknown }

/**
 * The Corppass client for the chosen profile. No profile (credentials and config nodes saved before the field
 * existed) stays legacy; the core checks the values, and the error names the credential field to fix.
 */
export function corppassLoginClient(options: LoginClientOptions, s: CorppassProfileSettings): CorppassClient | CorppassFapiClient {
  const profile = text(s.profile).trim() || 'legacy';
  try {
    return profile === 'fapi'
      ? createCorppassClient({ ...options, profile: 'fapi', appType: (text(s.appType).trim() || 'login') as CorppassAppType })
      : createCorppassClient({ ...options, profile: profile as 'legacy' });
  } catch (e) {
    return namingProfileField(e);
  }
}

/** A profile error names the credential field to fix; other settings' errors keep their own names. */
function namingProfileField(e: unknown): never {
  const field = isSingpassFlowsError(e) ? PROFILE_FIELDS[String(e.details?.field)] : undefined;
  if (!field) throw e;
  return inCredential(CREDENTIAL.corppass, field, () => { throw e; });
}

/** The core's option names → the Corppass credential / config node fields. */
const PROFILE_FIELDS: Record<string, string> = { profile: 'Profile', appType: 'App Type' };
