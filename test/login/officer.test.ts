import { officerDecision, requireRolesScope, type ActiveRole } from '../../src/login';

const role = (r: Partial<ActiveRole>): ActiveRole => ({ source: 'AuthInfo', eserviceId: 'SIGN-DOCS', role: 'Director', entitySub: '', startDate: '2026-01-01', endDate: '9999-12-31', parameters: {}, ...r });
const fapi = (roles: ActiveRole[]) => ({ entity: { id: '202612345K', name: 'Acme Widgets Pte Ltd', attributes: {} }, roles });
const legacy = (roles: ActiveRole[]) => ({ entityInfo: { CPEntID: '202612345K', CPEnt_TYPE: 'UEN' }, roles });

describe('officerDecision', () => {
  it('allows a user holding a listed role for the entity they logged in for, on both profiles', () => {
    expect(officerDecision(fapi([role({})]), { roles: ['Director'] })).toEqual({ allowed: true, onBehalfOf: { uen: '202612345K', entityName: 'Acme Widgets Pte Ltd', role: 'Director', eserviceId: 'SIGN-DOCS' } });
    expect(officerDecision(legacy([role({ role: 'Signatory' })]), { roles: ['Director', 'Signatory'], eserviceId: 'SIGN-DOCS' })).toEqual({ allowed: true, onBehalfOf: { uen: '202612345K', role: 'Signatory', eserviceId: 'SIGN-DOCS' } });
  });

  it('refuses without the role, with it for another e-service, or with it only as a third party', () => {
    for (const roles of [[role({ role: 'Viewer' })], [role({ eserviceId: 'OTHER' })], [role({ source: 'TPAuthInfo', clientId: 'C1' })], []]) {
      const d = officerDecision(fapi(roles), { roles: ['Director'], eserviceId: 'SIGN-DOCS' });
      expect(d).toMatchObject({ allowed: false, code: 'ROLE_REQUIRED' });
      expect(d.allowed === false && d.message).toMatch(/Acme Widgets Pte Ltd.*Director/);
    }
  });

  it('refuses a login that names no entity, and a rule with no role', () => {
    expect(officerDecision({ entityInfo: {}, roles: [role({})] }, { roles: ['Director'] })).toMatchObject({ allowed: false, code: 'ROLE_REQUIRED' });
    expect(() => officerDecision(fapi([role({})]), { roles: [' '] })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});

/** Corppass releases the roles only under the `authinfo` scope: a role check without it names the scope (issue 37). */
describe('roles asked for without the authinfo scope', () => {
  it('officerDecision fails with SCOPE_REQUIRED naming "authinfo", instead of refusing a user who may hold the role', () => {
    for (const scope of ['openid', 'openid tpauthinfo', '']) {
      expect(() => officerDecision({ ...fapi([]), scope } as never, { roles: ['Director'] }))
        .toThrow(expect.objectContaining({ code: 'SCOPE_REQUIRED', message: expect.stringMatching(/needs the "authinfo" scope.*add "authinfo" to the scope/) }));
    }
  });

  it('decides as before when the scope has authinfo, or when the granted scope is not known', () => {
    expect(officerDecision({ ...fapi([role({})]), scope: 'openid authinfo user.name' } as never, { roles: ['Director'] })).toMatchObject({ allowed: true });
    expect(officerDecision(legacy([role({})]), { roles: ['Director'] })).toMatchObject({ allowed: true });
  });

  it('requireRolesScope: a plain fetch of the roles also accepts tpauthinfo, and names the way out the editor offers', () => {
    expect(() => requireRolesScope('openid tpauthinfo', { thirdPartyToo: true })).not.toThrow();
    expect(() => requireRolesScope('openid', { what: 'Fetch Authorization Info', thirdPartyToo: true, orElse: 'turn Fetch Authorization Info off' }))
      .toThrow(expect.objectContaining({
        code: 'SCOPE_REQUIRED',
        message: 'Fetch Authorization Info needs the "authinfo" or "tpauthinfo" scope, and this login was granted "openid": add "authinfo" to the scope where the login starts (e.g. "openid authinfo"), or turn Fetch Authorization Info off. With FAPI 2.0 the scope must also be enabled for your client.',
      }));
  });
});
