import { createHmac, randomBytes } from 'node:crypto';
import { SingpassFlowsError, invalidInput } from '../errors';
import { constantTimeEqual } from '../secrets';

/**
 * `client_notification_token`s a webhook receiver can check WITHOUT remembering them: each token is
 * `sfn1_<id>_<mac>` where `id` is 128 random bits (hex) and `mac` = HMAC-SHA256(secret, id) (base64url), so any
 * process holding the DSAP's secret can tell statelessly that this DSAP issued a presented Bearer. The charset is the
 * one the signing API allows (letters, digits, `_`, `-`; 70 characters ≤ 255).
 *
 * Proving "issued by us" is not enough: a token is bound to ONE session. The session record keeps the token it was
 * created with, and the session engine refuses an event presented with another session's token (see
 * `src/session`), because the sign_ref only exists after create-session.
 */
export interface NotificationTokens {
  /** A fresh token for one new session (pass it to create-session and keep it in the session record). */
  issue(): string;
  /** True when `token` was issued with the current secret or one of `previousSecrets` (constant-time MAC check). */
  isIssued(token: string): boolean;
  /** The random id inside a token this DSAP issued (log-safe), or undefined. */
  idOf(token: string): string | undefined;
}

export interface NotificationTokenOptions {
  /** The DSAP-held secret (≥ 32 bytes / characters of high entropy), e.g. from a credential; never logged. */
  secret: string | Buffer;
  /** Secrets rotated out but still accepted for sessions started before the rotation. */
  previousSecrets?: (string | Buffer)[];
}

const FORMAT = /^sfn1_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;
/** Domain separation: the same secret used elsewhere never yields a valid token. */
const LABEL = 'singpass-flows client_notification_token v1\n';

/**
 * @example
 * const tokens = createNotificationTokens({ secret: process.env.DSAP_WEBHOOK_SECRET! });
 * const clientNotificationToken = tokens.issue();            // per session
 * tokens.isIssued(bearerFromWebhook);                         // stateless check in the webhook trigger
 */
export function createNotificationTokens(options: NotificationTokenOptions): NotificationTokens {
  if (!options || typeof options !== 'object') throw invalidInput('notificationSecret', 'is required');
  const secrets = [options.secret, ...(options.previousSecrets ?? [])].map((s, i) => checkSecret(s, i === 0 ? 'notificationSecret' : `previousSecrets[${i - 1}]`));
  const mac = (secret: Buffer, id: string): string => createHmac('sha256', secret).update(LABEL + id).digest('base64url');
  const parse = (token: string): { id: string; mac: string } | undefined => {
    const m = typeof token === 'string' ? FORMAT.exec(token) : null;
    return m ? { id: m[1], mac: m[2] } : undefined;
  };
  const isIssued = (token: string): boolean => {
    const p = parse(token);
    if (!p) return false;
    let ok = false;
    for (const s of secrets) ok = constantTimeEqual(p.mac, mac(s, p.id)) || ok; // every secret tried: no timing hint
    return ok;
  };
  return {
    issue() {
      const id = randomBytes(16).toString('hex');
      return `sfn1_${id}_${mac(secrets[0], id)}`;
    },
    isIssued,
    idOf: (token) => (isIssued(token) ? parse(token)!.id : undefined),
  };
}

/** A DSAP-held secret: text or bytes, at least 32 of them (shared by every HMAC this package keys with it). */
export function checkSecret(value: unknown, field: string): Buffer {
  const b = Buffer.isBuffer(value) ? value : typeof value === 'string' ? Buffer.from(value, 'utf8') : undefined;
  if (!b) throw invalidInput(field, 'must be text or bytes');
  if (b.length < 32) {
    throw new SingpassFlowsError('INVALID_INPUT', `${field}: must be at least 32 characters of random text (e.g. from "openssl rand -base64 32")`, { field, retryable: false });
  }
  return b;
}
