import { SingpassLogin } from '../../../nodes/SingpassLogin/SingpassLogin.node';
import { executeContext } from '../context';
import { authorizeAs, startLoginSandbox, type LoginSandbox } from '../login-harness';

describe('Singpass Login node against the sandbox FAPI provider (real HTTP on 127.0.0.1)', () => {
  let sb: LoginSandbox;
  beforeAll(async () => {
    sb = await startLoginSandbox();
  });
  afterAll(() => sb.close());

  const run = (params: Record<string, unknown>) =>
    new SingpassLogin().execute.call(executeContext({ params, credentials: sb.credentials }));

  it('start (PAR + DPoP) → authorize → complete gives the verified person data', async () => {
    const [[started]] = await run({ resource: 'login', operation: 'startLogin', scope: 'openid user.identity name', options: {} });
    expect(started.json.loginUrl).toMatch(/\/singpass\/fapi\/.*request_uri=/);
    // the PAR request_uri's lifetime (the sandbox, like Singpass: 60 s), well before the login itself expires
    const urlLife = Date.parse(String(started.json.loginUrlExpiresAt)) - Date.now();
    expect(urlLife).toBeGreaterThan(50_000);
    expect(urlLife).toBeLessThanOrEqual(60_000);
    expect(Date.parse(String(started.json.expiresAt))).toBeGreaterThan(Date.parse(String(started.json.loginUrlExpiresAt)));
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'citizen');
    const [[done]] = await run({
      resource: 'login', operation: 'completeLogin', transaction: started.json.setCookie, callback: Object.fromEntries(new URL(callbackUrl).searchParams), options: {},
    });
    expect(done.json.sub).toBe('b8d6a2e4-5c1f-4f3a-9e7d-2a1b3c4d5e6f');
    expect(done.json.person).toMatchObject({ name: 'TAN XIAO HUI' });
    expect(done.pairedItem).toEqual({ item: 0 });
  });

  it('a Corppass transaction cannot complete a Singpass login', async () => {
    const { Corppass } = require('../../../nodes/Corppass/Corppass.node') as typeof import('../../../nodes/Corppass/Corppass.node');
    const [[cpStarted]] = await new Corppass().execute.call(executeContext({ params: { resource: 'login', operation: 'startLogin', scope: 'openid' }, credentials: sb.credentials }));
    const callbackUrl = await authorizeAs(cpStarted.json.loginUrl as string, 'cp-admin');
    await expect(run({ resource: 'login', operation: 'completeLogin', transaction: cpStarted.json.transaction, callback: callbackUrl, options: {} }))
      .rejects.toMatchObject({ context: { code: 'LOGIN_STATE_INVALID' } });
  });

  it('a blank scope asks for openid only (the core\'s default): the UUID, no person data', async () => {
    const [[started]] = await run({ resource: 'login', operation: 'startLogin', scope: ' ', options: {} });
    const callbackUrl = await authorizeAs(started.json.loginUrl as string, 'citizen');
    const [[done]] = await run({
      resource: 'login', operation: 'completeLogin', transaction: started.json.setCookie, callback: Object.fromEntries(new URL(callbackUrl).searchParams), options: {},
    });
    expect(done.json.sub).toBe('b8d6a2e4-5c1f-4f3a-9e7d-2a1b3c4d5e6f');
    expect(done.json.person ?? {}).not.toHaveProperty('name');
  });
});
