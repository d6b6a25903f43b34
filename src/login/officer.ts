import { SingpassFlowsError } from '../errors';
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

type AnyCorppassLogin = Pick<CorppassLoginResult, 'roles' | 'entityInfo'> | Pick<CorppassFapiLoginResult, 'roles' | 'entity'>;

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
