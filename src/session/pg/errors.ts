import type { PoolConfig } from 'pg';
import { SingpassFlowsError, type ErrorDetails } from '../../errors';

/** Node socket errors of a server that is down, restarting or unreachable. */
const TRANSIENT_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EAI_AGAIN', 'EADDRNOTAVAIL']);
/** node-postgres's own errors (no code) of a lost or slow connection. */
const TRANSIENT_MESSAGE = /timeout exceeded when trying to connect|connection terminated|query read timeout|connection timeout|not queryable|terminating connection/i;

/**
 * A driver or server error as a SingpassFlowsError: STORE_BUSY (retryable) when the server is unreachable, shutting
 * down or starting, timed out, out of connections or asked to retry a transaction; STORE_FAILED otherwise. The
 * message is the driver's, with every password it could contain removed (no `cause`: it may reference the config).
 */
export function storeError(e: unknown, what: string, secrets: string[], phase: 'connect' | 'query'): SingpassFlowsError {
  const err = (e ?? {}) as { code?: unknown; message?: unknown; errors?: unknown };
  const inner = Array.isArray(err.errors) ? (err.errors[0] as typeof err | undefined) : undefined; // AggregateError of a multi-address connect
  const code = typeof err.code === 'string' ? err.code : typeof inner?.code === 'string' ? inner.code : undefined;
  const raw = typeof err.message === 'string' && err.message ? err.message : typeof inner?.message === 'string' ? inner.message : String(e);
  const message = redact(raw, secrets);
  const sqlState = code && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  const details: ErrorDetails = { ...(sqlState ? { sqlState } : code ? { errno: code } : {}) };
  const busy = (kind: string): SingpassFlowsError => new SingpassFlowsError('STORE_BUSY', `Session store (PostgreSQL) ${kind}: could not ${what} (${message}). ${phase === 'connect'
    ? 'Nothing was written; retry'
    : 'Retry: compare-and-set makes it safe (a save that did go through is then refused as a conflict at its new revision)'}`, { ...details, retryable: true, phase });
  if (code && TRANSIENT_ERRNO.has(code)) return busy('unreachable');
  if (sqlState) {
    if (sqlState.startsWith('08')) return busy('connection lost');
    if (sqlState === '57P01' || sqlState === '57P02' || sqlState === '57P03') return busy('shutting down or starting');
    if (sqlState === '57014') return busy('statement timed out');
    if (sqlState.startsWith('53')) return busy('out of resources (connections, memory or disk)');
    if (sqlState === '40001' || sqlState === '40P01' || sqlState === '55P03') return busy('busy (lock or serialization conflict)');
    if (sqlState.startsWith('28')) return new SingpassFlowsError('STORE_FAILED', `Session store (PostgreSQL) refused the login: ${message}. Check the user and password of the connection`, { ...details, retryable: false });
    if (sqlState === '22P05' || sqlState === '22021') return new SingpassFlowsError('STATE_INVALID', `Session store (PostgreSQL): could not ${what}: the record holds text PostgreSQL cannot store (${message})`, { ...details, retryable: false });
  } else if (TRANSIENT_MESSAGE.test(raw)) {
    return busy(/timeout/i.test(raw) ? 'timed out' : 'connection lost');
  }
  return new SingpassFlowsError('STORE_FAILED', `Session store (PostgreSQL): could not ${what}: ${message}${sqlState ? ` (SQLSTATE ${sqlState})` : ''}. Check the database, the user's rights and the connection settings`, { ...details, retryable: false });
}

/** Passwords a pool config holds (its own field and the connection string's), to be removed from messages. */
export function secretsOf(config: PoolConfig | undefined): string[] {
  const out: string[] = [];
  if (typeof config?.password === 'string' && config.password) out.push(config.password);
  if (typeof config?.connectionString === 'string') {
    try {
      const pw = new URL(config.connectionString).password;
      if (pw) out.push(pw, decodeURIComponent(pw));
    } catch {
      // not a URL (key=value form): the generic rule below still applies
    }
    const kv = /(?:^|\s)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)/i.exec(config.connectionString);
    if (kv?.[1]) out.push(kv[1].replace(/^'|'$/g, ''));
  }
  return [...new Set(out)].filter((s) => s.length > 0);
}

export function redact(text: string, secrets: string[]): string {
  let s = text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@').replace(/(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)/gi, '$1***');
  for (const secret of secrets) s = s.split(secret).join('***');
  return s;
}
