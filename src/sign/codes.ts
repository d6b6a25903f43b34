import { randomInt } from 'node:crypto';
import { randomToken } from '../secrets';

/**
 * A fresh 4-digit challenge code ("0000"–"9999", leading zeros kept), uniformly random. The user compares it on
 * your page and in the app, so it must not be predictable or reused between sessions.
 *
 * @example generateChallengeCode() // "0427"
 */
export function generateChallengeCode(): string {
  return String(randomInt(0, 10_000)).padStart(4, '0');
}

/**
 * A fresh `client_notification_token` (base64url has `-`/`_`, both allowed): 256 bits, so the webhook's Bearer check
 * cannot be guessed. Keep it with the session state; the webhook accepts only this value.
 */
export function generateNotificationToken(): string {
  return randomToken();
}
