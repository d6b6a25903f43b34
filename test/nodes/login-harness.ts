/**
 * The sandbox's Corppass and Singpass providers on 127.0.0.1, and a relying party whose keys are the node
 * credentials' keys, published by the Singpass Key Set node itself (so the providers check what the node serves).
 */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';
import { generateClientKeys } from '../../src/keys';
import { listen, mount, type RunningServer } from '../../sandbox/http';
import { createCorppassFapiProvider, createCorppassProvider, createSingpassProvider, type CorppassFapiProvider, type CorppassProvider, type SingpassProvider } from '../../sandbox/login';
import { SingpassKeySet } from '../../nodes/SingpassKeySet/SingpassKeySet.node';
import { executeContext } from './context';

export interface LoginSandbox {
  credentials: { corppassApi: ICredentialDataDecryptedObject; singpassLoginApi: ICredentialDataDecryptedObject };
  redirectUri: string;
  cp: CorppassProvider;
  /** Corppass FAPI 2.0 (issuer `${sandboxUrl}/corppass-fapi`): use the Corppass credential with `profile: 'fapi'`. */
  cpFapi: CorppassFapiProvider;
  sp: SingpassProvider;
  close(): Promise<void>;
}

export async function startLoginSandbox(): Promise<LoginSandbox> {
  const keys = await generateClientKeys();
  let handler: Parameters<typeof listen>[0] = () => undefined;
  const server: RunningServer = await listen((req, res, url) => handler(req, res, url));
  const redirectUri = `${server.baseUrl}/rp/callback`;
  const common = {
    environment: 'sandbox', sandboxUrl: server.baseUrl, clientId: 'n8n-rp', redirectUri, transactionSecret: 'n8n-test-transaction-secret-0123456789',
    signingKey: JSON.stringify(keys.signing), encryptionKey: JSON.stringify(keys.encryption),
  };
  const credentials = { corppassApi: { ...common }, singpassLoginApi: { ...common } };
  // The RP's JWKS endpoint answers with what the Key Set node outputs for the Corppass credential.
  const ctx = executeContext({ params: { sources: 'corppass' }, credentials });
  const [[jwks]] = await new SingpassKeySet().execute.call(ctx);
  const cp = createCorppassProvider({ baseUrl: server.baseUrl });
  const cpFapi = createCorppassFapiProvider({ baseUrl: server.baseUrl });
  const sp = createSingpassProvider({ baseUrl: server.baseUrl });
  const providers = mount([cp, cpFapi, sp]);
  handler = (req, res, url) => {
    if (url.pathname === '/rp/jwks') {
      res.writeHead(jwks.json.statusCode as number, jwks.json.headers as Record<string, string>).end(jwks.json.body as string);
      return;
    }
    return providers(req, res, url);
  };
  for (const p of [cp, cpFapi, sp]) p.registerClient({ clientId: 'n8n-rp', jwksUrl: `${server.baseUrl}/rp/jwks`, redirectUris: [redirectUri] });
  return { credentials, redirectUri, cp, cpFapi, sp, close: () => server.close() };
}

/** What a browser does with Start Login's output: go to loginUrl, come back with the redirect (not followed). */
export async function authorizeAs(loginUrl: string, user: string): Promise<string> {
  const url = new URL(loginUrl);
  url.searchParams.set('sandbox_user', user);
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 && res.status !== 303) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  return location!;
}
