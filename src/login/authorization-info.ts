import { SingpassFlowsError } from '../errors';
import { AUTH_INFO_MEMBERS, CORPPASS_MISSING_VALUE, FAPI_AUTH_INFO_MEMBERS } from './wire';

/** One `Parameter[]` entry of an authorization row. */
export interface AuthParameter { name: string; value: string }

/** `AuthInfo.Result_Set.ESrvc_Result[].Auth_Result_Set.Row[]` (spec §2.2). */
export interface AuthInfoRow { CPEntID_SUB: string; CPRole: string; StartDate: string; EndDate: string; Parameter: AuthParameter[] }
export interface AuthInfoEService { CPESrvcID: string; Auth_Result_Set: { Row_Count: number; Row: AuthInfoRow[] } }
/** The user's own authorizations. */
export interface AuthInfo { Result_Set: { ESrvc_Row_Count: number; ESrvc_Result: AuthInfoEService[] } }

/** `TPAuthInfo…TP_Auth[].Auth_Result_Set.Row[]`. */
export interface TPAuthInfoRow { CP_ClntEnt_SUB: string; CPRole: string; StartDate: string; EndDate: string; Parameter: AuthParameter[] }
export interface TPAuthClient { CP_Clnt_ID: string; CP_ClntEnt_TYPE: string; Auth_Result_Set: { Row_Count: number; Row: TPAuthInfoRow[] } }
export interface TPAuthInfoEService { CPESrvcID: string; Auth_Set: { ENT_ROW_COUNT: number; TP_Auth: TPAuthClient[] } }
/** Authorizations the user holds on behalf of client entities (third-party). */
export interface TPAuthInfo { Result_Set: { ESrvc_Row_Count: number; ESrvc_Result: TPAuthInfoEService[] } }

/** The verified authorization-info answer. */
export interface AuthorizationInfo {
  sub: string;
  issuedAt: number;
  expiresAt: number;
  authInfo: AuthInfo;
  tpAuthInfo: TPAuthInfo;
}

/** One active role, flat, for filtering in a low-code flow. */
export interface ActiveRole {
  source: 'AuthInfo' | 'TPAuthInfo';
  eserviceId: string;
  role: string;
  /** AuthInfo: the sub-entity (`CPEntID_SUB`, may be ''); TPAuthInfo: the client's sub-entity (`CP_ClntEnt_SUB`). */
  entitySub: string;
  /** TPAuthInfo only: the client entity acted for. */
  clientId?: string;
  clientEntityType?: string;
  startDate: string;
  endDate: string;
  parameters: Record<string, string>;
}

const bad = (msg: string) => new SingpassFlowsError('AUTHORIZATION_INFO_INVALID', `The authorization info ${msg}`);
const DATE = /^\d{4}-\d{2}-\d{2}$/;

type MemberName = (typeof AUTH_INFO_MEMBERS)[number] | (typeof FAPI_AUTH_INFO_MEMBERS)[number];

function member(payload: Record<string, unknown>, name: MemberName): Record<string, unknown> {
  let v = payload[name];
  if (v === undefined || v === null || v === '') return { Result_Set: { ESrvc_Row_Count: 0, ESrvc_Result: [] } };
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      throw bad(`"${name}" is a string but not JSON`);
    }
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw bad(`"${name}" is not an object`);
  return v as Record<string, unknown>;
}

const arr = (v: unknown, path: string): Record<string, unknown>[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad(`${path} is not a list`);
  return v.map((x, i) => {
    if (!x || typeof x !== 'object') throw bad(`${path}[${i}] is not an object`);
    return x as Record<string, unknown>;
  });
};
const str = (v: unknown, path: string, allowEmpty = true): string => {
  if (typeof v !== 'string' || (!allowEmpty && !v)) throw bad(`${path} is missing or not text`);
  return v;
};
const date = (v: unknown, path: string): string => {
  if (typeof v !== 'string' || !DATE.test(v)) throw bad(`${path} is not a YYYY-MM-DD date`);
  return v;
};
/** A sub-entity id, or '' when there is none (absent, not text, or Corppass's missing-value sentinel). */
const subEntity = (v: unknown): string => (typeof v === 'string' && v !== CORPPASS_MISSING_VALUE ? v : '');
const params = (v: unknown, path: string): AuthParameter[] =>
  arr(v, path).map((p, i) => ({ name: str(p.name, `${path}[${i}].name`), value: typeof p.value === 'string' ? p.value : String(p.value ?? '') }));

/**
 * Parse and type-check `AuthInfo` / `TPAuthInfo` (object or stringified JSON). Row counts are recomputed, not
 * trusted. `members` names them as sent: legacy `AuthInfo`/`TPAuthInfo`, FAPI userinfo `auth_info`/`tp_auth_info`.
 */
export function parseAuthorizationInfo(
  payload: Record<string, unknown>,
  members: readonly [MemberName, MemberName] = AUTH_INFO_MEMBERS,
): { authInfo: AuthInfo; tpAuthInfo: TPAuthInfo } {
  const [authName, tpName] = members;
  const a = member(payload, authName);
  const aRes = (a.Result_Set ?? {}) as Record<string, unknown>;
  const authInfo: AuthInfo = { Result_Set: { ESrvc_Row_Count: 0, ESrvc_Result: arr(aRes.ESrvc_Result, `${authName}.ESrvc_Result`).map((e, i) => {
    const p = `${authName}.ESrvc_Result[${i}]`;
    const rows = arr((e.Auth_Result_Set as Record<string, unknown> | undefined)?.Row, `${p}.Row`).map((r, j) => ({
      CPEntID_SUB: subEntity(r.CPEntID_SUB),
      CPRole: str(r.CPRole, `${p}.Row[${j}].CPRole`), // typed a string, empty allowed: a row, not a failed login
      StartDate: date(r.StartDate, `${p}.Row[${j}].StartDate`),
      EndDate: date(r.EndDate, `${p}.Row[${j}].EndDate`),
      Parameter: params(r.Parameter, `${p}.Row[${j}].Parameter`),
    }));
    return { CPESrvcID: str(e.CPESrvcID, `${p}.CPESrvcID`, false), Auth_Result_Set: { Row_Count: rows.length, Row: rows } };
  }) } };
  authInfo.Result_Set.ESrvc_Row_Count = authInfo.Result_Set.ESrvc_Result.length;

  const t = member(payload, tpName);
  const tRes = (t.Result_Set ?? {}) as Record<string, unknown>;
  const tpAuthInfo: TPAuthInfo = { Result_Set: { ESrvc_Row_Count: 0, ESrvc_Result: arr(tRes.ESrvc_Result, `${tpName}.ESrvc_Result`).map((e, i) => {
    const p = `${tpName}.ESrvc_Result[${i}]`;
    const clients = arr((e.Auth_Set as Record<string, unknown> | undefined)?.TP_Auth, `${p}.TP_Auth`).map((c, k) => {
      const q = `${p}.TP_Auth[${k}]`;
      const rows = arr((c.Auth_Result_Set as Record<string, unknown> | undefined)?.Row, `${q}.Row`).map((r, j) => ({
        CP_ClntEnt_SUB: subEntity(r.CP_ClntEnt_SUB),
        CPRole: str(r.CPRole, `${q}.Row[${j}].CPRole`),
        StartDate: date(r.StartDate, `${q}.Row[${j}].StartDate`),
        EndDate: date(r.EndDate, `${q}.Row[${j}].EndDate`),
        Parameter: params(r.Parameter, `${q}.Row[${j}].Parameter`),
      }));
      return { CP_Clnt_ID: str(c.CP_Clnt_ID, `${q}.CP_Clnt_ID`, false), CP_ClntEnt_TYPE: str(c.CP_ClntEnt_TYPE, `${q}.CP_ClntEnt_TYPE`), Auth_Result_Set: { Row_Count: rows.length, Row: rows } };
    });
    return { CPESrvcID: str(e.CPESrvcID, `${p}.CPESrvcID`, false), Auth_Set: { ENT_ROW_COUNT: clients.length, TP_Auth: clients } };
  }) } };
  tpAuthInfo.Result_Set.ESrvc_Row_Count = tpAuthInfo.Result_Set.ESrvc_Result.length;
  return { authInfo, tpAuthInfo };
}

/** Today in Singapore (UTC+8, no daylight saving): Corppass dates are Singapore calendar dates. */
export function singaporeDate(ms: number): string {
  return new Date(ms + 8 * 3600_000).toISOString().slice(0, 10);
}

/**
 * Every role active on `onDate` (default: today in Singapore), from both AuthInfo and TPAuthInfo, as flat rows.
 * A row is active when StartDate ≤ onDate ≤ EndDate (inclusive; `9999-12-31` means open-ended).
 */
export function activeRoles(info: Pick<AuthorizationInfo, 'authInfo' | 'tpAuthInfo'>, onDate: string | Date = singaporeDate(Date.now())): ActiveRole[] {
  const day = typeof onDate === 'string' ? onDate : singaporeDate(onDate.getTime());
  if (!DATE.test(day)) throw new SingpassFlowsError('INVALID_INPUT', 'onDate: use a YYYY-MM-DD date', { field: 'onDate' });
  const active = (r: { StartDate: string; EndDate: string }) => r.StartDate <= day && day <= r.EndDate;
  const toRecord = (ps: AuthParameter[]) => Object.fromEntries(ps.map((p) => [p.name, p.value]));
  const out: ActiveRole[] = [];
  for (const e of info.authInfo.Result_Set.ESrvc_Result) {
    for (const r of e.Auth_Result_Set.Row) {
      if (active(r)) out.push({ source: 'AuthInfo', eserviceId: e.CPESrvcID, role: r.CPRole, entitySub: r.CPEntID_SUB, startDate: r.StartDate, endDate: r.EndDate, parameters: toRecord(r.Parameter) });
    }
  }
  for (const e of info.tpAuthInfo.Result_Set.ESrvc_Result) {
    for (const c of e.Auth_Set.TP_Auth) {
      for (const r of c.Auth_Result_Set.Row) {
        if (active(r)) out.push({ source: 'TPAuthInfo', eserviceId: e.CPESrvcID, role: r.CPRole, entitySub: r.CP_ClntEnt_SUB, clientId: c.CP_Clnt_ID, clientEntityType: c.CP_ClntEnt_TYPE, startDate: r.StartDate, endDate: r.EndDate, parameters: toRecord(r.Parameter) });
      }
    }
  }
  return out;
}
