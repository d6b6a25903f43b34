import type { ICredentialsDecrypted, ICredentialTestFunctions, INodeCredentialTestResult } from 'n8n-workflow';
import { isSingpassFlowsError } from '../../src/errors';
import { RemoteKeySet } from '../../src/keys';
import { createSingpassClient } from '../../src/login';
import { createNotificationTokens } from '../../src/sign';
import { PgSessionStore } from '../../src/session';
import { corppassLoginClient, loginOptions, signSetup } from './credentials';
import type { LoginProvider } from '../../src/setup';
import { checkedTriggerFolder } from './file-store';
import { pgStoreSettings, storeSettings, type CredentialPgStore } from './pg-settings';

/**
 * Credential tests (n8n's "Test" button), referenced by the nodes' `testedBy`: each loads the keys with the core's
 * loader (wrong type, curve or a public key pasted instead of the private one is named) and reaches the service.
 */
async function run(check: () => Promise<string>): Promise<INodeCredentialTestResult> {
  try {
    return { status: 'OK', message: await check() };
  } catch (e) {
    return { status: 'Error', message: isSingpassFlowsError(e) ? `${e.message} [${e.code}]` : String((e as Error)?.message ?? e) };
  }
}

export async function testSignApi(this: ICredentialTestFunctions, credential: ICredentialsDecrypted): Promise<INodeCredentialTestResult> {
  return run(async () => {
    const setup = await signSetup(credential.data ?? {});
    await new RemoteKeySet(setup.endpoints.keySetUrl).prefetch();
    await setup.trustedRoots();
    return `Signing key ${setup.signingKey.kid} (${setup.signingKey.alg}) loaded; the service key set is reachable`;
  });
}

function testLogin(provider: LoginProvider) {
  return async function (this: ICredentialTestFunctions, credential: ICredentialsDecrypted): Promise<INodeCredentialTestResult> {
    return run(async () => {
      const o = await loginOptions(provider, credential.data ?? {});
      const client = provider === 'corppass' ? corppassLoginClient(o, credential.data ?? {}) : createSingpassClient(o);
      const md = await client.metadata();
      return `Keys ${o.signingKey.kid} and ${o.decryptionKeys[0].kid} loaded; ${md.issuer} discovered`;
    });
  };
}

export const testCorppass = testLogin('corppass');
export const testSingpassLogin = testLogin('singpass');

export async function testNotificationToken(this: ICredentialTestFunctions, credential: ICredentialsDecrypted): Promise<INodeCredentialTestResult> {
  return run(async () => {
    const d = credential.data ?? {};
    const tokens = createNotificationTokens({ secret: String(d.secret ?? ''), previousSecrets: d.previousSecret ? [String(d.previousSecret)] : [] });
    if (!tokens.isIssued(tokens.issue())) throw new Error('the secret does not round-trip');
    return 'The secret is long enough; tokens issued with it verify';
  });
}

/** Connect with the PostgreSQL store's credential and read the store's schema version (its tables appear on first use). */
export async function testSessionStorePostgres(this: ICredentialTestFunctions, credential: ICredentialsDecrypted): Promise<INodeCredentialTestResult> {
  return run(() => testPg(pgStoreSettings(credential.data ?? {})));
}

async function testPg({ settings, policy }: CredentialPgStore): Promise<string> {
  const store = new PgSessionStore(settings.connection, { tablePrefix: settings.tablePrefix, policy, autoMigrate: false });
  try {
    const version = await store.schemaVersion();
    return `Connected to ${settings.where}; ${version === 0 ? 'the store creates its tables on first use' : `store tables at schema version ${version}`}`;
  } finally {
    await store.close();
  }
}

/** The session store credential: PostgreSQL as above; a folder checked against N8N_RESTRICT_FILE_ACCESS_TO as the trigger checks it. */
export async function testSessionStore(this: ICredentialTestFunctions, credential: ICredentialsDecrypted): Promise<INodeCredentialTestResult> {
  return run(async () => {
    const settings = storeSettings(credential.data ?? {});
    if (settings.kind === 'postgres') return testPg({ settings: settings.pg, policy: settings.policy });
    const dir = await checkedTriggerFolder(settings.folder);
    return `Folder ${dir} is allowed by n8n's file-access settings; it is created on the first save if missing`;
  });
}
