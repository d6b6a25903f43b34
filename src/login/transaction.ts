import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { JWK } from 'jose';
import { SingpassFlowsError, invalidInput } from '../errors';
import { systemClock, type Clock } from '../clock';
import { importDpopKey } from './dpop';

/**
 * Everything the callback needs from the redirect that started a login. It holds secrets (PKCE verifier, DPoP
 * private key): keep it server-side, or seal it with {@link sealTransaction} before it leaves the server.
 */
export interface LoginTransaction {
  v: 1;
  /** Which client started it: a Singpass callback never completes a Corppass login and vice versa. */
  provider: (typeof LOGIN_PROVIDERS)[number];
  /** Random id; the single-use key in the {@link TransactionStore}. */
  id: string;
  /** The issuer this login was sent to; the callback's `iss` must equal it exactly (RFC 9207). */
  issuer: string;
  clientId: string;
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  scope: string;
  responseMode?: 'query' | 'form_post' | 'fragment';
  /**
   * Whether the callback must carry `iss`, decided from the provider's profile and discovery when the login started
   * (response-iss.ts). Absent (older transactions) means required.
   */
  issRequired?: boolean;
  /** FAPI only: the per-login DPoP key (private JWK) that binds the code and the access token. */
  dpopKey?: JWK;
  /** Singpass only: requested acr values, enforced on the ID token. */
  acrValues?: string[];
  /** ms since epoch */
  createdAt: number;
  /** ms since epoch; a callback after this is refused. */
  expiresAt: number;
}

/** Client kinds a transaction can belong to (Corppass legacy and FAPI 2.0 share a host but not their transactions). */
export const LOGIN_PROVIDERS = ['corppass', 'corppass-fapi', 'singpass'] as const;

/** Single-use bookkeeping of pending logins: `take` succeeds once per id, atomically. */
export interface TransactionStore {
  put(id: string, expiresAt: number): void | Promise<void>;
  /** True exactly once for a pending, unexpired id; false for unknown, expired or already-taken ids. */
  take(id: string): boolean | Promise<boolean>;
}

/** In-process store. Fine for one n8n / Node-RED process; use a shared store (Redis, DB) when running several. */
export class InMemoryTransactionStore implements TransactionStore {
  private readonly pending = new Map<string, number>();
  constructor(private readonly clock: Clock = systemClock, private readonly maxEntries = 100_000) {}

  put(id: string, expiresAt: number): void {
    if (this.pending.size >= this.maxEntries) this.sweep();
    if (this.pending.size >= this.maxEntries) {
      throw new SingpassFlowsError('LOGIN_STATE_INVALID', 'Too many logins are pending; try again shortly', { retryable: true });
    }
    this.pending.set(id, expiresAt);
  }

  take(id: string): boolean {
    const expiresAt = this.pending.get(id);
    // Delete before deciding: a concurrent second callback sees nothing (JS is single-threaded, so this is atomic).
    this.pending.delete(id);
    return expiresAt !== undefined && expiresAt > this.clock();
  }

  private sweep(): void {
    const now = this.clock();
    for (const [id, exp] of this.pending) if (exp <= now) this.pending.delete(id);
  }
}

/** The process-wide default, so clients re-created per workflow execution still share their pending logins. */
export const defaultTransactionStore: TransactionStore = new InMemoryTransactionStore();

const SEAL_PREFIX = 'sftx1.';
const AAD = Buffer.from('singpass-flows/login-transaction/v1');

function sealKey(secret: string | Buffer): Buffer {
  const raw = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (raw.length < 32) throw invalidInput('secret', 'the transaction secret must be at least 32 bytes (e.g. 32 random bytes, base64)');
  return Buffer.from(hkdfSync('sha256', raw, Buffer.from('singpass-flows'), Buffer.from('login-transaction-seal'), 32));
}

/**
 * Encrypt and authenticate a transaction (AES-256-GCM, key derived from `secret` with HKDF) so it can travel in a
 * cookie or workflow state without exposing the verifier or DPoP key, and cannot be altered.
 */
export function sealTransaction(tx: LoginTransaction, secret: string | Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(secret), iv);
  cipher.setAAD(AAD);
  const ct = Buffer.concat([cipher.update(JSON.stringify(tx), 'utf8'), cipher.final()]);
  return SEAL_PREFIX + Buffer.concat([iv, ct, cipher.getAuthTag()]).toString('base64url');
}

/** Reverse of {@link sealTransaction}; tampering, a wrong secret or an expired transaction → `LOGIN_STATE_INVALID`. */
export function openTransaction(sealed: string, secret: string | Buffer, options: { clock?: Clock } = {}): LoginTransaction {
  const bad = (why: string) => new SingpassFlowsError('LOGIN_STATE_INVALID', `The login transaction ${why}; start the login again`);
  if (typeof sealed !== 'string' || !sealed.startsWith(SEAL_PREFIX)) throw bad('is not a sealed transaction');
  const raw = Buffer.from(sealed.slice(SEAL_PREFIX.length), 'base64url');
  if (raw.length < 12 + 16 + 2) throw bad('is truncated');
  let tx: LoginTransaction;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealKey(secret), raw.subarray(0, 12));
    decipher.setAAD(AAD);
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
    tx = JSON.parse(plain.toString('utf8')) as LoginTransaction;
  } catch (e) {
    if (e instanceof SingpassFlowsError) throw e;
    throw bad('was altered or sealed with another secret');
  }
  assertTransactionShape(tx);
  if ((options.clock ?? systemClock)() >= tx.expiresAt) throw bad('has expired');
  return tx;
}

/** Structural check of a transaction handed back by a caller (it may come from storage or a user's flow). */
export function assertTransactionShape(tx: unknown): asserts tx is LoginTransaction {
  const t = tx as Partial<LoginTransaction> | null;
  const strings = ['id', 'issuer', 'clientId', 'redirectUri', 'state', 'nonce', 'codeVerifier', 'scope'] as const;
  if (!t || typeof t !== 'object' || t.v !== 1 || !LOGIN_PROVIDERS.includes(t.provider as LoginTransaction['provider']) ||
      strings.some((k) => typeof t[k] !== 'string' || !t[k]) || typeof t.createdAt !== 'number' || typeof t.expiresAt !== 'number' ||
      (t.issRequired !== undefined && typeof t.issRequired !== 'boolean')) {
    throw new SingpassFlowsError('LOGIN_STATE_INVALID', 'The login transaction is missing or malformed; pass the transaction returned by startLogin');
  }
  // FAPI logins carry their DPoP key: one that cannot be read is refused here, not as a crypto error mid-callback.
  if (t.dpopKey !== undefined) importDpopKey(t.dpopKey);
}
