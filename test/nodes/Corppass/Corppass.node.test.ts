import { NodeOperationError } from 'n8n-workflow';
import { Corppass } from '../../../nodes/Corppass/Corppass.node';
import { executeContext } from '../context';
import { authorizeAs, startLoginSandbox, type LoginSandbox } from '../login-harness';

describe('Corppass node against the sandbox provider (real HTTP on 127.0.0.1)', () => {
  let sb: LoginSandbox;
  beforeAll(async () => {
    sb = await startLoginSandbox();
  });
  afterAll(() => sb.close());

  const run = (params: Record<string, unknown>, json: Record<string, unknown> = {}, continueOnFail = false) =>
    new Corppass().execute.call(executeContext({ params, items: [{ json: json as never }], credentials: sb.credentials, continueOnFail }));

  async function start() {
    const [[started]] = await run({ resource: 'login', operation: 'startLogin', scope: 'openid authinfo' });
    return started;
  }

  it('start → authorize → complete gives the verified identity, typed roles and the active-roles list', async () => {
    const started = await start();
    expect(started.json).toMatchObject({ loginUrl: expect.stringContaining('/corppass/'), transaction: expect.stringMatching(/^sftx1\./) });
    expect(started.json.setCookie).toMatch(/^singpass_flows_login=sftx1\.[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    expect(started.pairedItem).toEqual({ item: 0 });
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'cp-admin');
    // the callback webhook sees the cookie header and the query
    const cookie = `other=1; ${(started.json.setCookie as string).split(';')[0]}`;
    const query = Object.fromEntries(new URL(callbackUrl).searchParams);
    const [[done]] = await run({ resource: 'login', operation: 'completeLogin', transaction: cookie, callback: query, fetchAuthorizationInfo: true, includeAccessToken: false });
    expect(done.json.subject).toMatchObject({ raw: 's=S1234567A,uuid=3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b,u=CP192,c=SG' });
    expect(done.json.entityInfo).toMatchObject({ CPEntID: '201500001A' });
    expect(done.json.accessToken).toBeUndefined();
    const roles = done.json.activeRoles as Array<Record<string, unknown>>;
    expect(roles.map((r) => `${r.source}:${r.eserviceId}:${r.role}`).sort()).toEqual([
      'AuthInfo:SD-CPF2FA:CPF2FAR1', 'AuthInfo:SD-GSTFILE:Preparer', 'AuthInfo:SD-PERMITS:Viewer',
      'TPAuthInfo:SD-GSTFILE:Preparer', 'TPAuthInfo:SD-GSTFILE:Preparer',
    ]);
  });

  it('roles asked for under a scope without authinfo fail naming the scope, instead of an empty list (issue 37)', async () => {
    const [[started]] = await run({ resource: 'login', operation: 'startLogin', scope: 'openid' });
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'cp-admin');
    await expect(run({ resource: 'login', operation: 'completeLogin', transaction: started.json.transaction, callback: callbackUrl, fetchAuthorizationInfo: true, includeAccessToken: false }))
      .rejects.toMatchObject({ message: expect.stringContaining('Fetch Authorization Info needs the "authinfo" or "tpauthinfo" scope'), context: expect.objectContaining({ code: 'SCOPE_REQUIRED' }) });
  });

  it('Start Login asks for authinfo by default, where Complete Login uses the roles', () => {
    const scope = new Corppass().description.properties.find((p) => p.name === 'scope');
    expect(scope?.default).toBe('openid authinfo');
  });

  it('Get Authorization Info with the access token gives roles active on a chosen date', async () => {
    const started = await start();
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'cp-admin');
    const [[done]] = await run({ resource: 'login', operation: 'completeLogin', transaction: started.json.transaction, callback: callbackUrl, fetchAuthorizationInfo: false, includeAccessToken: true });
    expect(done.json.authorizationInfo).toBeUndefined();
    const [[info]] = await run({ resource: 'authorization', operation: 'getAuthorizationInfo', accessToken: done.json.accessToken, subject: (done.json.subject as { raw: string }).raw, activeOn: '2020-06-01' });
    expect((info.json.activeRoles as Array<{ role: string }>).map((r) => r.role).sort()).toEqual(['Approver', 'CPF2FAR2']);
    expect(info.json.authInfo).toBeDefined();
  });

  it('a second callback for the same login is refused (single use) with a stable code', async () => {
    const started = await start();
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'cp-admin');
    const params = { resource: 'login', operation: 'completeLogin', transaction: started.json.transaction, callback: callbackUrl, fetchAuthorizationInfo: false, includeAccessToken: false };
    await run(params);
    await expect(run(params)).rejects.toMatchObject({ context: { code: 'LOGIN_STATE_INVALID' } });
  });

  it('an altered transaction is refused; with Continue On Fail it becomes an error item', async () => {
    const started = await start();
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'cp-admin');
    const tampered = `${(started.json.transaction as string).slice(0, -4)}AAAA`;
    const params = { resource: 'login', operation: 'completeLogin', transaction: tampered, callback: callbackUrl, fetchAuthorizationInfo: false, includeAccessToken: false };
    await expect(run(params)).rejects.toBeInstanceOf(NodeOperationError);
    const [[item]] = await run(params, {}, true);
    expect(item.json).toMatchObject({ code: 'LOGIN_STATE_INVALID', error: expect.stringMatching(/altered/) });
    expect(item.pairedItem).toEqual({ item: 0 });
  });

  it('a missing callback is a clear input error', async () => {
    const started = await start();
    await expect(run({ resource: 'login', operation: 'completeLogin', transaction: started.json.transaction, callback: '', fetchAuthorizationInfo: false, includeAccessToken: false }))
      .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/Callback Parameters/) });
  });
});

describe('Corppass node with Profile "FAPI 2.0" against the sandbox FAPI provider (real HTTP on 127.0.0.1)', () => {
  let sb: LoginSandbox;
  beforeAll(async () => {
    sb = await startLoginSandbox();
  });
  afterAll(() => sb.close());

  const run = (params: Record<string, unknown>, corppassApi: Record<string, unknown> = {}) => new Corppass().execute.call(executeContext({
    params, items: [{ json: {} }], credentials: { ...sb.credentials, corppassApi: { ...sb.credentials.corppassApi, profile: 'fapi', appType: 'login', ...corppassApi } },
  }));

  it('start (PAR) → authorize → complete gives the entity, the user uuid and the roles active today', async () => {
    const [[started]] = await run({ resource: 'login', operation: 'startLogin', scope: 'openid authinfo tpauthinfo', authenticationContextMessage: 'Submit GST return' });
    expect(started.json.loginUrl).toEqual(expect.stringContaining('/corppass-fapi/'));
    expect(Date.parse(String(started.json.loginUrlExpiresAt)) - Date.now()).toBeLessThanOrEqual(60_000);
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'cp-admin');
    const [[done]] = await run({ resource: 'login', operation: 'completeLogin', transaction: started.json.transaction, callback: callbackUrl, fetchAuthorizationInfo: true, includeAccessToken: true });
    expect(done.json.entity).toMatchObject({ id: '201500001A' });
    expect(done.json.user).toMatchObject({ uuid: '3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b' });
    const roles = done.json.roles as Array<Record<string, unknown>>;
    expect(roles.map((r) => `${r.source}:${r.eserviceId}:${r.role}`).sort()).toEqual([
      'AuthInfo:SD-CPF2FA:CPF2FAR1', 'AuthInfo:SD-GSTFILE:Preparer', 'AuthInfo:SD-PERMITS:Viewer',
      'TPAuthInfo:SD-GSTFILE:Preparer', 'TPAuthInfo:SD-GSTFILE:Preparer',
    ]);
    expect(done.json.authorizationInfo).toMatchObject({ sub: '3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b' });
    expect(done.json.accessToken).toBeUndefined(); // FAPI never outputs the (DPoP-bound) access token
  });

  it('Get Authorization Info is refused: the roles come with Complete Login', async () => {
    await expect(run({ resource: 'authorization', operation: 'getAuthorizationInfo', accessToken: 'x', subject: 'y', activeOn: '' }))
      .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/FAPI 2\.0.*roles come with "complete" login.*authinfo/) });
  });

  it('an authentication context under the legacy profile is refused, naming the field', async () => {
    await expect(run({ resource: 'login', operation: 'startLogin', scope: 'openid', authenticationContextMessage: 'Submit GST return' }, { profile: 'legacy' }))
      .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/Authentication Context Message.*FAPI 2\.0/) });
  });

  it('an unknown profile or app type is refused, naming the credential field', async () => {
    await expect(run({ resource: 'login', operation: 'startLogin', scope: 'openid' }, { profile: 'fapi2' }))
      .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/field "Profile".*"legacy".*"fapi"/) });
    await expect(run({ resource: 'login', operation: 'startLogin', scope: 'openid' }, { appType: 'mib' }))
      .rejects.toMatchObject({ context: { code: 'INVALID_INPUT' }, message: expect.stringMatching(/field "App Type"/) });
    // another setting's error is not blamed on the profile
    await expect(run({ resource: 'login', operation: 'startLogin', scope: 'openid' }, { environment: 'custom', issuer: 'http://cp.example.sg' }))
      .rejects.toMatchObject({ message: expect.not.stringMatching(/Profile|App Type/) });
    await expect(run({ resource: 'login', operation: 'startLogin', scope: 'openid' }, { environment: 'custom', issuer: 'http://cp.example.sg' }))
      .rejects.toMatchObject({ message: expect.stringMatching(/issuer: must use https/) });
  });

  it('the credential test discovers the issuer of the chosen profile', async () => {
    const test = (profile: string) => new Corppass().methods.credentialTest.corppassApiTest.call({} as never, { id: '1', name: 'cp', type: 'corppassApi', data: { ...sb.credentials.corppassApi, profile } } as never);
    expect(await test('fapi')).toMatchObject({ status: 'OK', message: expect.stringMatching(/\/corppass-fapi discovered$/) });
    expect(await test('legacy')).toMatchObject({ status: 'OK', message: expect.stringMatching(/\/corppass discovered$/) });
    expect(await test('nope')).toMatchObject({ status: 'Error', message: expect.stringMatching(/Profile/) });
  });
});
