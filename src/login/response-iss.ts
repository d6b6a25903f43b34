import { SingpassFlowsError } from '../errors';
import { constantTimeEqual } from '../secrets';

/**
 * RFC 9207 `iss` in authorization responses, per provider profile — the one place this rule lives.
 *
 * - `required`: the profile mandates it (FAPI 2.0; Singpass FAPI sends `iss` on every redirect since June 2026):
 *   discovery must advertise `authorization_response_iss_parameter_supported: true`, and every callback must carry
 *   the exact issuer.
 * - `as-advertised`: follow the provider's discovery. Corppass publishes the flag `false` and sends no `iss` today
 *   (Corppass FAPI adds it "at a later date"): a callback without `iss` is then accepted, a present one must still
 *   be exact. The mix-up defence is that every transaction is bound to one issuer (and one redirect URI per
 *   provider); the day the provider turns the flag on, `iss` becomes required with no configuration change.
 */
export type ResponseIssRule = 'required' | 'as-advertised';

/**
 * Whether callbacks from a provider must carry `iss`, from its discovery document. Throws (via `bad`) when the
 * profile requires the parameter and discovery does not advertise it, or when the member is not a boolean.
 */
export function responseIssRequired(raw: Record<string, unknown>, rule: ResponseIssRule, bad: (msg: string) => Error): boolean {
  const flag = raw.authorization_response_iss_parameter_supported;
  if (flag !== undefined && typeof flag !== 'boolean') throw bad(`"authorization_response_iss_parameter_supported" is ${JSON.stringify(flag)}, expected true or false`);
  if (rule === 'required' && flag !== true) {
    throw bad('does not set authorization_response_iss_parameter_supported to true; this provider must send "iss" in every login response (it protects against mix-up attacks)');
  }
  return flag === true;
}

/**
 * Check a callback's `iss` (already de-duplicated, one form-url-decode) against the transaction's issuer: exact
 * string equality, no normalisation (RFC 9207 §2.4: trailing slash, case, port all count). A missing `iss` is
 * refused unless the transaction recorded that its provider does not send one (`issRequired: false`).
 */
export function checkResponseIss(iss: string | undefined, tx: { issuer: string; issRequired?: boolean }): void {
  if (iss === undefined) {
    // Transactions created before this rule existed carry no flag: they keep the strict behaviour.
    if (tx.issRequired === false) return;
    throw new SingpassFlowsError('LOGIN_ISSUER_MISMATCH', 'The login response does not say which provider sent it (no "iss"), although this provider always sends it; refusing it. Start the login again');
  }
  if (!constantTimeEqual(iss, tx.issuer)) {
    throw new SingpassFlowsError('LOGIN_ISSUER_MISMATCH', 'The login response comes from a different provider than the one this login was sent to ("iss" differs); refusing it. Start the login again');
  }
}
