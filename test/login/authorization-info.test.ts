import { activeRoles, officerDecision, parseAuthorizationInfo } from '../../src/login';
import { FAPI_AUTH_INFO_MEMBERS } from '../../src/login/wire';

/** Corppass types CPRole as a string: an empty one is a row with an empty role, never a failed login (issue 37). */
describe('an empty CPRole', () => {
  const row = (CPRole: string) => ({ CPEntID_SUB: '', CPRole, StartDate: '2026-01-01', EndDate: '9999-12-31', Parameter: [] });
  const tpRow = (CPRole: string) => ({ CP_ClntEnt_SUB: '', CPRole, StartDate: '2026-01-01', EndDate: '9999-12-31', Parameter: [] });

  it('is kept as a row with an empty role, beside the user\'s other roles (legacy AuthInfo and TPAuthInfo)', () => {
    const info = parseAuthorizationInfo({
      AuthInfo: { Result_Set: { ESrvc_Row_Count: 1, ESrvc_Result: [{ CPESrvcID: 'SD-GSTFILE', Auth_Result_Set: { Row_Count: 2, Row: [row(''), row('Preparer')] } }] } },
      TPAuthInfo: { Result_Set: { ESrvc_Row_Count: 1, ESrvc_Result: [{ CPESrvcID: 'SD-GSTFILE', Auth_Set: { ENT_ROW_COUNT: 1, TP_Auth: [{ CP_Clnt_ID: '53123456X', CP_ClntEnt_TYPE: 'UEN', Auth_Result_Set: { Row_Count: 1, Row: [tpRow('')] } }] } }] } },
    });
    expect(info.authInfo.Result_Set.ESrvc_Result[0].Auth_Result_Set.Row.map((r) => r.CPRole)).toEqual(['', 'Preparer']);
    expect(activeRoles(info, '2026-06-01').map((r) => [r.source, r.role])).toEqual([['AuthInfo', ''], ['AuthInfo', 'Preparer'], ['TPAuthInfo', '']]);
  });

  it('is kept under FAPI 2.0 (auth_info), and never matches a role a flow requires', () => {
    const info = parseAuthorizationInfo({ auth_info: { Result_Set: { ESrvc_Result: [{ CPESrvcID: 'SD-GSTFILE', Auth_Result_Set: { Row: [row('')] } }] } } }, FAPI_AUTH_INFO_MEMBERS);
    const roles = activeRoles(info, '2026-06-01');
    expect(roles).toEqual([{ source: 'AuthInfo', eserviceId: 'SD-GSTFILE', role: '', entitySub: '', startDate: '2026-01-01', endDate: '9999-12-31', parameters: {} }]);
    const d = officerDecision({ entity: { id: '201500001A', attributes: {} }, roles, scope: 'openid authinfo' } as never, { roles: ['Preparer'] });
    expect(d).toMatchObject({ allowed: false, code: 'ROLE_REQUIRED' });
  });

  it('a CPRole that is not text at all is still refused, naming where', () => {
    expect(() => parseAuthorizationInfo({ AuthInfo: { Result_Set: { ESrvc_Result: [{ CPESrvcID: 'E', Auth_Result_Set: { Row: [{ ...row(''), CPRole: null }] } }] } } }))
      .toThrow(expect.objectContaining({ code: 'AUTHORIZATION_INFO_INVALID', message: expect.stringContaining('AuthInfo.ESrvc_Result[0].Row[0].CPRole') }));
  });
});
