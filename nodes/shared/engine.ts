import { createHash } from 'node:crypto';
import type { ICredentialDataDecryptedObject, IExecuteFunctions, IWebhookFunctions } from 'n8n-workflow';
import { SingpassFlowsError } from '../../src/errors';
import { createSigningEngine, type SigningEngine } from '../../src/session';
import { createNotificationTokens } from '../../src/sign';
import { CREDENTIAL, inCredential, nodeCredential, signSetup, type SignSetup } from './credentials';

/**
 * The signing-session engine for the node's credentials. Engines are cached per process by a hash of the credential
 * data — only an optimisation (service key set, intermediates, the delivery log that answers an obvious duplicate
 * early): every step takes the session record from the workflow, so a new process builds a new engine and goes on.
 */
const engines = new Map<string, Promise<{ engine: SigningEngine; setup: SignSetup }>>();
const MAX_CACHED = 20;

export async function signingEngine(ctx: IExecuteFunctions | IWebhookFunctions): Promise<{ engine: SigningEngine; setup: SignSetup }> {
  const sign = await nodeCredential(ctx, CREDENTIAL.sign);
  const tokens = await nodeCredential(ctx, CREDENTIAL.notificationToken);
  const key = createHash('sha256').update(JSON.stringify([sign, tokens])).digest('base64url');
  let entry = engines.get(key);
  if (!entry) {
    entry = build(sign, tokens);
    entry.catch(() => engines.delete(key));
    if (engines.size >= MAX_CACHED) engines.delete(engines.keys().next().value!);
    engines.set(key, entry);
  }
  return entry;
}

/**
 * The node's "Singpass Sign API" credential, checked (keys parsed), for the operations that need no engine (the
 * Document ones): read through {@link nodeCredential} and parsed once per credential content per process, as the
 * engine is.
 */
const setups = new Map<string, Promise<SignSetup>>();

export async function signSetupOf(ctx: IExecuteFunctions): Promise<SignSetup> {
  const sign = await nodeCredential(ctx, CREDENTIAL.sign);
  const key = createHash('sha256').update(JSON.stringify(sign)).digest('base64url');
  let entry = setups.get(key);
  if (!entry) {
    entry = signSetup(sign);
    entry.catch(() => setups.delete(key));
    if (setups.size >= MAX_CACHED) setups.delete(setups.keys().next().value!);
    setups.set(key, entry);
  }
  return entry;
}

async function build(sign: ICredentialDataDecryptedObject, tokens: ICredentialDataDecryptedObject): Promise<{ engine: SigningEngine; setup: SignSetup }> {
  const setup = await signSetup(sign);
  const notificationTokens = inCredential(CREDENTIAL.notificationToken, 'Secret', () => createNotificationTokens({
    secret: String(tokens.secret ?? ''),
    previousSecrets: typeof tokens.previousSecret === 'string' && tokens.previousSecret ? [tokens.previousSecret] : [],
  }));
  const tenantId = String(sign.tenantId ?? '').trim();
  const domainName = String(sign.domainName ?? '').trim();
  if (!tenantId) throw new SingpassFlowsError('INVALID_INPUT', 'Credential "Singpass Sign API", field "Tenant ID": is required', { field: 'Tenant ID' });
  if (!domainName) throw new SingpassFlowsError('INVALID_INPUT', 'Credential "Singpass Sign API", field "Domain Name": is required (the host name of your QR page)', { field: 'Domain Name' });
  const engine = createSigningEngine({
    client: setup.client,
    serviceKeySetUrl: setup.endpoints.keySetUrl,
    notificationTokens,
    trustedRoots: await setup.trustedRoots(),
    tsaUrl: setup.endpoints.tsaUrl,
    tenantId,
    domainName,
  });
  return { engine, setup };
}
