import { officerDecision, type ActiveRole } from '../../src/login';

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
