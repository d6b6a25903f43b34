/**
 * Config nodes (like core `mqtt-broker`): shared connection settings, with every secret in Node-RED's credential
 * store (never in the flow file). Keys are checked on deploy — a wrong paste is reported at once, naming the field —
 * and again when a node uses them.
 */
import { loginOptions, loginPublicKeys } from '../src/setup';
import { configLabels } from './lib/labels';
import type { LoginClientOptions } from '../src/login';
import { LOGIN_CLIENT, type LoginClientNode } from './lib/login-client';
import { asError } from './lib/run';
import { nodeRedSessionStore, sessionStoreKind } from './lib/store-factory';
import { unusableSessionStore } from '../src/session';
import {
  NOTIFICATION_SECRET, SIGN_CLIENT, handOverPolicyOf, legacyDocumentDirOf, sessionDirOf, signingKeyOf, engineFactory,
  type NotificationSecretNode, type SignClientNode, type SignClientSettings,
} from './lib/sign-client';
import type { NodeAPI, NodeDef } from './lib/types';

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');

export = function register(RED: NodeAPI): void {
  function SignClient(this: SignClientNode, def: NodeDef & Partial<SignClientSettings>) {
    RED.nodes.createNode(this, def);
    this.name = text(def.name);
    this.settings = {
      environment: text(def.environment) || 'staging', sandboxUrl: text(def.sandboxUrl), baseUrl: text(def.baseUrl), keySetUrl: text(def.keySetUrl),
      tsaUrl: text(def.tsaUrl), clientId: text(def.clientId), trustedRoots: typeof def.trustedRoots === 'string' ? def.trustedRoots : '',
      domainName: text(def.domainName), tenantId: text(def.tenantId), audience: text(def.audience), sessionDir: text(def.sessionDir),
      contextStore: text(def.contextStore), documentDir: text(def.documentDir),
      notificationSecret: text(def.notificationSecret),
      sessionStore: sessionStoreKind(def.sessionStore), pgHost: text(def.pgHost), pgPort: text(String(def.pgPort ?? '')), pgDatabase: text(def.pgDatabase),
      pgUser: text(def.pgUser), pgTablePrefix: text(def.pgTablePrefix), pgSsl: def.pgSsl === true, pgTakeOverSeconds: text(String(def.pgTakeOverSeconds ?? '')),
      handOverLeaseSeconds: text(String(def.handOverLeaseSeconds ?? '')), handOverWindowSeconds: text(String(def.handOverWindowSeconds ?? '')),
    };
    try {
      this.handOverPolicy = handOverPolicyOf(this.settings, this.name || this.id);
    } catch (e) {
      // a wrong value is reported at deploy; sessions keep the policy's own until it is fixed
      this.error(asError(e));
      this.handOverPolicy = handOverPolicyOf({}, this.name || this.id);
    }
    this.engine = engineFactory(RED, this);
    try {
      this.store = nodeRedSessionStore({
        choice: this.settings, pgPassword: this.credentials?.pgPassword, clientName: this.name || this.id, sessionDir: sessionDirOf(RED, this.settings),
        // sessions an older version kept in the context store move to the folder once, before the first use
        legacy: { context: this.context().global, storeName: this.settings.contextStore ?? '', documentDir: legacyDocumentDirOf(RED, this.settings) },
        onImported: (moved) => {
          if (moved.length) this.log(`moved ${moved.length} signing session(s) from the context store to the session folder`);
        },
        onImportFailed: (e) => this.warn(`signing sessions kept in the context store by an older version could not be moved to the session folder: ${asError(e).message}`),
      });
    } catch (e) {
      // A store that cannot be built (a PostgreSQL field missing): reported at deploy; every use reports it again
      const err = asError(e);
      this.error(err);
      this.store = unusableSessionStore(err, this.settings.sessionStore === 'postgres' ? 'postgres' : 'folder');
    }
    this.log(`signing sessions in the ${this.store.where}`); // never the password
    const store = this.store;
    this.on('close', (_removed, done) => {
      store.close().catch(() => undefined).finally(done); // the PostgreSQL pool: its connections end with the node
    });
    signingKeyOf(this).catch((e: unknown) => this.error(asError(e)));
  }
  RED.nodes.registerType(SIGN_CLIENT, SignClient as never, { credentials: { signingKey: { type: 'password' }, pgPassword: { type: 'password' } } });

  function NotificationSecret(this: NotificationSecretNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    this.name = text(def.name);
  }
  RED.nodes.registerType(NOTIFICATION_SECRET, NotificationSecret as never, {
    credentials: { secret: { type: 'password' }, previousSecret: { type: 'password' } },
  });

  for (const provider of ['corppass', 'singpass'] as const) {
    function LoginClient(this: LoginClientNode, def: NodeDef) {
      RED.nodes.createNode(this, def);
      this.name = text(def.name);
      this.provider = provider;
      const settings = {
        environment: text(def.environment) || 'staging', sandboxUrl: text(def.sandboxUrl), issuer: text(def.issuer), clientId: text(def.clientId), redirectUri: text(def.redirectUri),
        // Corppass only; a config saved before these fields existed has none and stays legacy (src/setup/login-setup).
        ...(provider === 'corppass' ? { profile: text(def.profile), appType: text(def.appType) } : {}),
      };
      this.corppassProfile = { profile: settings.profile, appType: settings.appType };
      const creds = () => ({ ...settings, ...this.credentials });
      this.labels = configLabels(provider === 'corppass' ? 'Corppass client' : 'Singpass login client', this);
      let options: Promise<LoginClientOptions & { transactionSecret: string }> | undefined;
      this.options = () => {
        if (!options) {
          options = loginOptions(provider, creds(), this.labels);
          options.catch(() => undefined); // reported to the node that asks
        }
        return options;
      };
      this.publicKeys = () => loginPublicKeys(provider, creds(), this.labels);
      this.options().catch((e: unknown) => this.error(asError(e)));
    }
    RED.nodes.registerType(LOGIN_CLIENT[provider], LoginClient as never, {
      credentials: { signingKey: { type: 'password' }, encryptionKey: { type: 'password' }, transactionSecret: { type: 'password' } },
    });
  }
};
