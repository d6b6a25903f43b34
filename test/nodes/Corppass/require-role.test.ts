/**
 * Corppass Complete Login's Require Role (the core's officerDecision) against the sandbox's Corppass over real HTTP,
 * on BOTH profiles: legacy (roles from the authorization-info call) and FAPI 2.0 (roles with the login). A user
 * holding the role for the entity they logged in for gets onBehalfOf for Create Session; others get a refusal and a
 * page that says why; a role held only as a third party does not count.
 */
import { Corppass } from '../../../nodes/Corppass/Corppass.node';
import { executeContext } from '../context';
import { authorizeAs, startLoginSandbox, type LoginSandbox } from '../login-harness';

describe.each(['legacy', 'fapi'] as const)('Corppass Complete Login with Require Role (%s profile, sandbox over HTTP)', (profile) => {
  let sb: LoginSandbox;
  beforeAll(async () => {
    sb = await startLoginSandbox();
  });
  afterAll(() => sb.close());

  const credentials = () => ({ ...sb.credentials, corppassApi: { ...sb.credentials.corppassApi, profile, ...(profile === 'fapi' ? { appType: 'login' } : {}) } });
  const run = (params: Record<string, unknown>) => new Corppass().execute.call(executeContext({ params, credentials: credentials() }));

  async function loginAs(user: string, rule: { roles: string; eserviceId?: string }) {
    const [[started]] = await run({ resource: 'login', operation: 'startLogin', scope: 'openid authinfo' });
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, user);
    const [[done]] = await run({
      resource: 'login', operation: 'completeLogin', transaction: started.json.transaction, callback: callbackUrl, fetchAuthorizationInfo: false, includeAccessToken: false,
      requireRole: true, roles: rule.roles, eserviceId: rule.eserviceId ?? '',
    });
    return done.json;
  }

  it('allows a user holding the role for their entity: onBehalfOf names the UEN, the role and the e-service', async () => {
    const out = await loginAs('cp-admin', { roles: 'Approver, Preparer', eserviceId: 'SD-GSTFILE' });
    expect(out.officer).toEqual({ allowed: true });
    expect(out.onBehalfOf).toMatchObject({ uen: '201500001A', role: 'Preparer', eserviceId: 'SD-GSTFILE' });
    expect(out.refusalPage).toBeUndefined();
  });

  it('refuses a user without the role (another user of the same company; a role not active yet) with a plain page', async () => {
    const fin = await loginAs('cp-fin', { roles: 'Preparer', eserviceId: 'SD-GSTFILE' });
    expect(fin.officer).toMatchObject({ allowed: false, code: 'ROLE_REQUIRED', message: expect.stringMatching(/201500001A.*Preparer for SD-GSTFILE/) });
    expect(fin.onBehalfOf).toBeUndefined();
    expect(fin.refusalPage).toMatch(/^<!doctype html>.*Not allowed to sign for this company.*needs the Corppass role Preparer/s);
    // cp-admin's Approver role on SD-GSTFILE starts in 2099
    expect((await loginAs('cp-admin', { roles: 'Approver', eserviceId: 'SD-GSTFILE' })).officer).toMatchObject({ allowed: false, code: 'ROLE_REQUIRED' });
  });

  it('does not count a role held only for a client entity (TPAuthInfo)', async () => {
    // cp-foreign holds Applicant for SD-PERMITS for its own entity, nothing else; cp-admin holds Preparer for SD-GSTFILE
    // for its own entity AND as a third party: only the own one counts, and only for that e-service
    expect((await loginAs('cp-admin', { roles: 'Preparer', eserviceId: 'SD-PERMITS' })).officer).toMatchObject({ allowed: false });
    const foreign = await loginAs('cp-foreign', { roles: 'Applicant' });
    expect(foreign.officer).toEqual({ allowed: true });
    expect(foreign.onBehalfOf).toMatchObject({ uen: 'F-MY-0042731', role: 'Applicant', eserviceId: 'SD-PERMITS' });
  });

  it('refuses to run with Require Role on and no role named', async () => {
    const [[started]] = await run({ resource: 'login', operation: 'startLogin', scope: 'openid authinfo' });
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'cp-admin');
    await expect(run({ resource: 'login', operation: 'completeLogin', transaction: started.json.transaction, callback: callbackUrl, requireRole: true, roles: ' , ', eserviceId: '' }))
      .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' } });
  });
});
