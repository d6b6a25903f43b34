/**
 * Same shapes for the Corppass and Singpass clients, over real HTTP against the sandbox providers: scope
 * optional, data endpoints (Singpass userinfo, Corppass authorization info) called only when the granted scope
 * releases data there and required in discovery only then, and — with warm caches, a new client per execution as a
 * workflow engine builds it — exactly the protocol's own requests per login.
 */
import { SingpassFlowsError } from '../../src/errors';
import type { Fetch } from '../../src/http';
import { createCorppassClient, createSingpassClient } from '../../src/login';
import { authorize, CLIENT_ID, endpointsSince, lastSeq, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.close(); });
afterEach(() => { for (const p of [h.corppass, h.singpass]) p.reset(); });

/** The HTTP function of one "execution": records the paths the client itself requested. */
function execFetch(): Fetch & { paths: string[] } {
  const paths: string[] = [];
  const f = (async (url: string, init?: RequestInit) => { paths.push(new URL(url).pathname.replace(/^\/(corppass|singpass\/fapi)/, '')); return fetch(url, init); }) as Fetch & { paths: string[] };
  f.paths = paths;
  return f;
}

/** Clients exactly as an n8n / Node-RED node builds them per execution: default caches and store, own fetch. */
function newExecution(kind: 'corppass' | 'singpass') {
  const fetch = execFetch();
  const common = { clientId: CLIENT_ID, signingKey: h.signingKey, decryptionKeys: [h.encryptionKey], redirectUri: h.redirectUri, allowInsecureLoopback: true, fetch };
  return kind === 'corppass'
    ? { fetch, cp: createCorppassClient({ ...common, issuer: h.corppass.issuer }) }
    : { fetch, sp: createSingpassClient({ ...common, issuer: h.singpass.issuer }) };
}

async function singpassLogin(scope?: string, fetchUserinfo?: boolean) {
  const { fetch, sp } = newExecution('singpass');
  const { url, transaction } = await sp!.startLogin(scope === undefined ? undefined : { scope });
  const login = await sp!.completeLogin({ transaction, callback: await authorize(url), fetchUserinfo });
  return { login, paths: fetch.paths };
}

async function corppassLogin(scope?: string, fetchAuthorizationInfo?: boolean) {
  const { fetch, cp } = newExecution('corppass');
  const { url, transaction } = await cp!.startLogin(scope === undefined ? undefined : { scope });
  const login = await cp!.completeLogin({ transaction, callback: await authorize(url, { user: 'cp-admin' }), fetchAuthorizationInfo });
  return { login, paths: fetch.paths };
}

async function rejection(p: Promise<unknown>): Promise<SingpassFlowsError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  if (!(e instanceof SingpassFlowsError)) throw new Error(`expected a SingpassFlowsError, got ${e === undefined ? 'success' : String(e)}`);
  return e;
}

describe('requests per login with warm caches (a new client per execution)', () => {
  beforeAll(async () => {
    await singpassLogin('openid uinfin'); // warm discovery and keys of both providers
    await corppassLogin('openid authinfo');
  });

  it.each([
    [undefined, ['/par', '/token']],
    ['openid user.identity name', ['/par', '/token']],
    ['openid uinfin name', ['/par', '/token', '/userinfo']],
  ] as const)('Singpass FAPI, scope %s: %j', async (scope, expected) => {
    const from = lastSeq(h.singpass);
    const { paths } = await singpassLogin(scope);
    expect(paths).toEqual(expected);
    // The provider saw the same, plus the browser's visit to the authorization endpoint.
    expect(endpointsSince(h.singpass, from)).toEqual(expected.map((p) => p.slice(1)).flatMap((e) => (e === 'par' ? ['par', 'authorize'] : [e])));
  });

  it.each([
    [undefined, ['/mga/sps/oauth/oauth20/token']],
    ['openid authinfo', ['/mga/sps/oauth/oauth20/token', '/authorization-info']],
    ['openid tpauthinfo', ['/mga/sps/oauth/oauth20/token', '/authorization-info']],
  ] as const)('Corppass (legacy), scope %s: %j', async (scope, expected) => {
    const from = lastSeq(h.corppass);
    const { paths } = await corppassLogin(scope);
    expect(paths).toEqual(expected);
    expect(endpointsSince(h.corppass, from).filter((e) => e !== 'authorize')).toEqual(expected.map((p) => (p === '/authorization-info' ? 'authorizationInfo' : 'token')));
  });
});

describe('Singpass shapes', () => {
  it('startLogin() needs no options: scope openid, the user UUID, no userinfo call', async () => {
    const { login, paths } = await singpassLogin();
    expect(login.scope).toBe('openid');
    expect(login.sub).toMatch(/^[0-9a-f-]{36}$/);
    expect(login.person).toEqual({});
    expect(paths).not.toContain('/userinfo');
  });

  it('ID-token scopes fill subAttributes; person-data scopes fill person from userinfo', async () => {
    const idOnly = await singpassLogin('openid user.identity');
    expect(idOnly.login.subAttributes).toMatchObject({ identity_number: expect.any(String) });
    const myinfo = await singpassLogin('openid uinfin sex');
    expect(myinfo.login.person).toMatchObject({ uinfin: expect.any(String), sex: expect.any(String) });
  });

  it('fetchUserinfo forces the call on or off', async () => {
    expect((await singpassLogin('openid', true)).paths).toContain('/userinfo');
    const off = await singpassLogin('openid uinfin', false);
    expect(off.paths).not.toContain('/userinfo');
    expect(off.login.person).toEqual({});
  });

  it('discovery without userinfo_endpoint: fine until a person-data scope needs it, then DISCOVERY_INVALID before PAR', async () => {
    h.singpass.misbehave({ discoveryOverride: { userinfo_endpoint: null } });
    const { sp } = newExecution('singpass');
    await sp!.refresh();
    await expect(singpassLogin('openid user.identity')).resolves.toMatchObject({ paths: ['/par', '/token'] });
    const from = lastSeq(h.singpass);
    const e = await rejection(singpassLogin('openid uinfin'));
    expect(e.code).toBe('DISCOVERY_INVALID');
    expect(e.message).toMatch(/"userinfo_endpoint" is missing, and the scope "openid uinfin" releases data only there/);
    expect(endpointsSince(h.singpass, from)).toEqual([]);
    h.singpass.reset();
    await sp!.refresh();
  });
});

describe('Corppass shapes', () => {
  it('scope authinfo: completeLogin returns the verified authorization info and the roles active today', async () => {
    const { login } = await corppassLogin('openid authinfo tpauthinfo');
    expect(login.scope).toBe('openid authinfo tpauthinfo');
    expect(login.authorizationInfo!.sub).toBe(login.sub);
    expect(login.roles.length).toBeGreaterThan(0);
    expect(login.roles[0]).toMatchObject({ eserviceId: expect.any(String), role: expect.any(String) });
    expect(login.amr).toEqual(expect.any(Array));
  });

  it('the access token is opaque (Corppass: RPs must not parse it): one that is no JWT at all still logs in', async () => {
    h.corppass.misbehave({ tokenFields: { access_token: 'opaque-corppass-access-token' } });
    const { login } = await corppassLogin();
    expect(login.accessToken).toBe('opaque-corppass-access-token');
  });

  it('default scope openid: no authorization-info call, empty roles; fetchAuthorizationInfo forces it', async () => {
    const plain = await corppassLogin();
    expect(plain.login.authorizationInfo).toBeUndefined();
    expect(plain.login.roles).toEqual([]);
    const forced = await corppassLogin(undefined, true);
    expect(forced.paths).toContain('/authorization-info');
    expect(forced.login.roles.length).toBeGreaterThan(0);
  });

  it('discovery without an authorization-info endpoint: fine for openid, DISCOVERY_INVALID before the redirect for authinfo', async () => {
    h.corppass.misbehave({ discoveryOverride: { 'authorization-info_endpoint': null, userinfo_endpoint: null } });
    const { cp } = newExecution('corppass');
    await cp!.refresh();
    await expect(corppassLogin('openid')).resolves.toMatchObject({ paths: ['/mga/sps/oauth/oauth20/token'] });
    const e = await rejection(newExecution('corppass').cp!.startLogin({ scope: 'openid authinfo' }));
    expect(e.code).toBe('DISCOVERY_INVALID');
    expect(e.message).toMatch(/"authorization-info_endpoint" is missing/);
    h.corppass.reset();
    await cp!.refresh();
  });
});
