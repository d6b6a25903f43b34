import { SingpassFlowsError, invalidInput } from '../errors';
import type { Fetch } from '../http';
import { systemClock, type Clock } from '../clock';
import type { EcSigningAlg, LoadedKey } from '../keys';
import { defaultProviderCache, type ProviderCache } from './discovery';
import { defaultTransactionStore, type LoginTransaction, type TransactionStore, assertTransactionShape } from './transaction';
import { requireHttpsUrl } from '../http';
import { checkTimeoutMs } from '../settings';
import type { ProviderIo } from './util';

/** Settings shared by the Corppass and Singpass clients. */
export interface LoginClientOptions {
  /** Issuer identifier exactly as the provider publishes it (e.g. `https://stg-id.singpass.gov.sg/fapi`). */
  issuer: string;
  clientId: string;
  /** Our signing key (`loadSigningKey`), for client assertions. Its public part must be in the registered key set. */
  signingKey: LoadedKey<EcSigningAlg>;
  /** Our decryption keys (`loadEncryptionKey`): the current one and, during a rotation, the previous one. */
  decryptionKeys: LoadedKey[];
  /** Registered redirect URI (https). */
  redirectUri: string;
  fetch?: Fetch;
  clock?: Clock;
  timeoutMs?: number;
  /** Allow http URLs on 127.0.0.1/localhost (the local sandbox demo only). */
  allowInsecureLoopback?: boolean;
  /** Where pending logins are recorded for single use (default: one in-process store shared by all clients). */
  transactionStore?: TransactionStore;
  /** How long a started login may take before its callback is refused (default 600 s). */
  transactionTtlSeconds?: number;
  /**
   * Discovery and key-set cache. Default: one per process, shared by every client whatever `fetch` each passes (the
   * client's own `fetch` performs the requests it triggers), so a client built per workflow execution still finds
   * discovery and keys cached. Pass your own only to isolate clients (tests).
   */
  providerCache?: ProviderCache;
}

export interface ResolvedConfig extends Required<Omit<LoginClientOptions, 'fetch' | 'timeoutMs'>> {
  fetch?: Fetch;
  timeoutMs?: number;
}

/** The HTTP function, clock and timeout this client brings to the shared caches. */
export function providerIo(c: ResolvedConfig): ProviderIo {
  return { fetch: c.fetch, clock: c.clock, timeoutMs: c.timeoutMs };
}

export function resolveConfig(o: LoginClientOptions): ResolvedConfig {
  if (!o || typeof o !== 'object') throw invalidInput('options', 'client options are required');
  const insecure = o.allowInsecureLoopback === true;
  requireHttpsUrl('issuer', o.issuer, { allowLoopbackHttp: insecure });
  requireHttpsUrl('redirectUri', o.redirectUri, { allowLoopbackHttp: insecure });
  if (typeof o.clientId !== 'string' || !o.clientId.trim()) throw invalidInput('clientId', 'the client ID from onboarding is required');
  if (!o.signingKey || o.signingKey.use !== 'sig' || !o.signingKey.privateKey) throw invalidInput('signingKey', 'load it with loadSigningKey()');
  if (!Array.isArray(o.decryptionKeys) || o.decryptionKeys.length === 0) throw invalidInput('decryptionKeys', 'at least one encryption key (loadEncryptionKey()) is required: ID tokens are always encrypted');
  const kids = new Set<string>();
  for (const k of o.decryptionKeys) {
    if (!k || k.use !== 'enc' || !k.privateKey) throw invalidInput('decryptionKeys', 'load each key with loadEncryptionKey()');
    if (kids.has(k.kid)) throw invalidInput('decryptionKeys', `two keys share the key ID "${k.kid}"`);
    kids.add(k.kid);
  }
  checkTimeoutMs('timeoutMs', o.timeoutMs);
  const ttl = o.transactionTtlSeconds ?? 600;
  if (!Number.isFinite(ttl) || ttl < 30 || ttl > 3600) throw invalidInput('transactionTtlSeconds', 'use 30 to 3600 seconds');
  const clock = o.clock ?? systemClock;
  return {
    issuer: o.issuer,
    clientId: o.clientId,
    signingKey: o.signingKey,
    decryptionKeys: o.decryptionKeys,
    redirectUri: o.redirectUri,
    fetch: o.fetch,
    clock,
    timeoutMs: o.timeoutMs,
    allowInsecureLoopback: insecure,
    transactionStore: o.transactionStore ?? defaultTransactionStore,
    transactionTtlSeconds: ttl,
    providerCache: o.providerCache ?? defaultProviderCache,
  };
}

/**
 * Check that a transaction handed back to completeLogin belongs to this client, (single use is enforced by takeTransaction):
 * a second callback for the same login, an expired login, or one started at another provider is refused.
 */
export function checkTransactionOwner(tx: unknown, c: ResolvedConfig, provider: LoginTransaction["provider"]): LoginTransaction {
  assertTransactionShape(tx);
  if (tx.provider !== provider || tx.issuer !== c.issuer || tx.clientId !== c.clientId || tx.redirectUri !== c.redirectUri) {
    throw new SingpassFlowsError('LOGIN_STATE_INVALID', `This login was started with a different provider or client (${tx.provider} at ${tx.issuer}); it cannot be completed here`);
  }
  return tx;
}

export async function takeTransaction(tx: LoginTransaction, c: ResolvedConfig): Promise<void> {
  const fresh = await c.transactionStore.take(tx.id);
  if (c.clock() >= tx.expiresAt) {
    throw new SingpassFlowsError('LOGIN_STATE_INVALID', `This login expired: it must be completed within ${Math.round((tx.expiresAt - tx.createdAt) / 1000)} s of starting (transactionTtlSeconds); start the login again`);
  }
  if (!fresh) {
    throw new SingpassFlowsError('LOGIN_STATE_INVALID', 'This login was already completed (a replayed or double-submitted callback), or was started by a process that does not share this transaction store; start the login again');
  }
}
