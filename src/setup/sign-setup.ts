import { SingpassFlowsError } from '../errors';
import { httpRequest, requireHttpsUrl } from '../http';
import { loadSigningKey, type EcSigningAlg, type LoadedKey } from '../keys';
import { certsFromPemOrDer } from '../pki';
import { SigningApiClient } from '../sign/client';
import { signEndpoints, type SignEndpoints } from './environments';
import { inSetting, type SettingLabels } from './labels';

/**
 * The settings a signing front end collects (n8n: the "Singpass Sign API" credential; Node-RED: the client config
 * node and its credentials), by key. Each front end labels them (`SettingLabels.fields`): `environment`,
 * `sandboxUrl`, `baseUrl`, `keySetUrl`, `tsaUrl`, `clientId`, `signingKey`, `trustedRoots`, `audience`.
 */
export type SignSettings = Readonly<Record<string, unknown>>;

export interface SignSetup {
  endpoints: SignEndpoints;
  signingKey: LoadedKey<EcSigningAlg>;
  client: SigningApiClient;
  /** Trust anchors for chains, status checks and verification (pasted ones, plus the sandbox's root, fetched). */
  trustedRoots(): Promise<Buffer[]>;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Everything the signing steps need from a front end's settings, checked, each error naming the field to fix. */
export async function signSetup(settings: SignSettings, labels: SettingLabels): Promise<SignSetup> {
  const endpoints = inSetting(labels, 'environment', () => signEndpoints(settings));
  const signingKey = await inSetting(labels, 'signingKey', () => loadSigningKey({ key: text(settings.signingKey) }));
  // empty: the default (the API's origin); a service told another value at onboarding refuses every call with 401
  const audience = text(settings.audience).trim();
  if (audience) inSetting(labels, 'audience', () => requireHttpsUrl('audience', audience, { allowLoopbackHttp: true }));
  const client = inSetting(labels, 'clientId', () => new SigningApiClient({ baseUrl: endpoints.baseUrl, clientId: text(settings.clientId), signingKey, ...(audience ? { audience } : {}) }));
  return { endpoints, signingKey, client, trustedRoots: () => trustedRoots(settings, endpoints, labels) };
}

/** Sandbox roots by URL: fetched once per process (an optimisation; refetched after a restart). */
const sandboxRoots = new Map<string, Buffer[]>();

async function trustedRoots(settings: SignSettings, e: SignEndpoints, labels: SettingLabels): Promise<Buffer[]> {
  const pasted = text(settings.trustedRoots).trim();
  const roots = pasted ? inSetting(labels, 'trustedRoots', () => parseRoots(pasted)) : [];
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
