import { SingpassFlowsError } from '../errors';
import { CORPPASS_AUTHORIZATION_SCOPES } from './wire';
import type { ActiveRole } from './authorization-info';
import type { CorppassLoginResult } from './corppass';
import type { CorppassFapiLoginResult } from './corppass-fapi';

/** The entity a signing is made for and the role that allowed it: what goes into the session record. */
export interface OnBehalfOf {
  /** UEN (or the Corppass ID of a non-UEN entity) the user logged in for. */
  uen: string;
  entityName?: string;
  /** The Corppass role that allowed it (`CPRole`). */
  role: string;
  /** The e-service the role is granted for (`CPESrvcID`). */
  eserviceId: string;
}

export interface OfficerRule {
  /** Roles that may sign for the entity (`CPRole`, compared exactly). At least one. */
  roles: string[];
  /** Only roles granted for this e-service (`CPESrvcID`); any e-service when absent. */
  eserviceId?: string;
}

export type OfficerDecision =
  | { allowed: true; onBehalfOf: OnBehalfOf }
  | { allowed: false; code: 'ROLE_REQUIRED'; message: string };

/** `scope`: the granted scope, when known; roles asked for without `authinfo` fail instead of finding none. */
type AnyCorppassLogin = (Pick<CorppassLoginResult, 'roles' | 'entityInfo'> | Pick<CorppassFapiLoginResult, 'roles' | 'entity'>) & { scope?: unknown };

/**
 * Corppass releases the entity's own roles (AuthInfo) only under the `authinfo` scope; without it a role check would
 * refuse every user for a role they may well hold. `scope` absent (not known): nothing to check. `orElse`: the
 * other way out the caller's editor offers (e.g. turning the roles off).
 */
export function requireRolesScope(scope: unknown, o: { what?: string; thirdPartyToo?: boolean; orElse?: string } = {}): void {
  if (scope === undefined || scope === null) return;
  // the entity's own roles need `authinfo`; any roles (a plain fetch) are also released by `tpauthinfo`
  const accepted = o.thirdPartyToo ? CORPPASS_AUTHORIZATION_SCOPES : CORPPASS_AUTHORIZATION_SCOPES.slice(0, 1);
  const granted = typeof scope === 'string' ? scope.split(/\s+/) : [];
  if (accepted.some((a) => granted.includes(a))) return;
  const named = accepted.map((a) => `"${a}"`).join(' or ');
  throw new SingpassFlowsError('SCOPE_REQUIRED', `${o.what ?? 'Checking the user\'s Corppass role'} needs the ${named} scope, and this login was granted "${typeof scope === 'string' ? scope : ''}": add "authinfo" to the scope where the login starts (e.g. "openid authinfo")${o.orElse ? `, or ${o.orElse}` : ''}. With FAPI 2.0 the scope must also be enabled for your client.`, { field: 'scope', retryable: false });
}

/**
 * The entity of a Corppass login, whichever profile: FAPI 2.0 names it in `sub` (`entity.id`), the legacy profile in
 * the `entityInfo` claim (`CPEntID`).
 */
export function corppassEntity(login: AnyCorppassLogin): { uen: string; name?: string } | undefined {
  if ('entity' in login && login.entity?.id) return { uen: login.entity.id, ...(login.entity.name ? { name: login.entity.name } : {}) };
  const info = 'entityInfo' in login ? login.entityInfo : undefined;
  const uen = info?.CPEntID;
  if (typeof uen !== 'string' || !uen) return undefined;
  // the legacy ID token names only non-UEN entities (`CPNonUEN_Name`)
  const name = info?.CPNonUEN_Name;
  return { uen, ...(typeof name === 'string' && name ? { name } : {}) };
}

/**
 * May this Corppass user sign for the entity they logged in for? Only the entity's own roles count (AuthInfo, active
 * today): a third party's roles (TPAuthInfo) are granted for a client entity, not for the one they logged in as.
 */
export function officerDecision(login: AnyCorppassLogin, rule: OfficerRule): OfficerDecision {
  const roles = (rule?.roles ?? []).map((r) => String(r).trim()).filter(Boolean);
  if (roles.length === 0) throw new SingpassFlowsError('INVALID_INPUT', 'roles: name at least one Corppass role that may sign for the company', { field: 'roles', retryable: false });
  requireRolesScope(login.scope);
  const entity = corppassEntity(login);
  if (!entity) return { allowed: false, code: 'ROLE_REQUIRED', message: 'The Corppass login names no entity (UEN), so nobody can sign for it.' };
  const held = (login.roles ?? []).find((r: ActiveRole) => r.source === 'AuthInfo' && roles.includes(r.role) && (rule.eserviceId === undefined || r.eserviceId === rule.eserviceId));
  if (!held) {
    return {
      allowed: false,
      code: 'ROLE_REQUIRED',
      message: `Signing for ${entity.name ?? entity.uen} needs the Corppass role ${roles.join(' or ')}${rule.eserviceId ? ` for ${rule.eserviceId}` : ''}; your Corppass administrator can assign it.`,
    };
  }
  return { allowed: true, onBehalfOf: { uen: entity.uen, ...(entity.name ? { entityName: entity.name } : {}), role: held.role, eserviceId: held.eserviceId } };
}
