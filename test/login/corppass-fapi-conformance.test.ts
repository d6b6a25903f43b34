/**
 * Every applicable item of the RP conformance checklist against the sandbox Corppass FAPI 2.0 provider
 * (`CORPPASS_FAPI_CASES`, derived from the shared cases), over real HTTP on 127.0.0.1, through the FAPI client. A
 * "reject" must fail closed with the item's typed error, make no call past the failing step and leak no secret;
 * an "accept" must log in with the roles read from userinfo.
 */
import { CORPPASS_FAPI_CASES, type CorppassFapiCase } from '../../sandbox/login';
import { SingpassFlowsError, type ErrorCode } from '../../src/errors';
import type { LoginTransaction } from '../../src/login';
import { authorize, corppassFapiClient, endpointsSince, expectCleanRefusal, lastSeq, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => { h = await startHarness(); });
afterAll(async () => { await h.close(); });
// Reset switches and drop keys a rotation case left published (item 72 needs exactly one key).
afterEach(() => { h.corppassFapi.reset(); h.corppassFapi.retireOldKeys(); });

/** The typed error each item must produce. */
function expectedCode(c: CorppassFapiCase): ErrorCode[] {
  const i = c.item;
  if (i <= 2) return ['DISCOVERY_INVALID'];
  if (i === 8 || i === 9) return ['PAR_FAILED'];
  // Corppass sends no `iss`: an error without one is trusted once `state` matches; a wrong one never is.
  if (i === 15) return [c.misbehaviour.authIss === 'wrong' ? 'LOGIN_ISSUER_MISMATCH' : 'LOGIN_PROVIDER_ERROR'];
  if (i >= 11 && i <= 14) return ['LOGIN_ISSUER_MISMATCH'];
  if (i === 16 || i === 17) return ['LOGIN_STATE_MISMATCH'];
  if (i === 18 || i === 19) return ['LOGIN_RESPONSE_INVALID'];
  if (i === 28) return c.misbehaviour.redirectBackChannel === 'jwks' ? ['KEY_SET_FETCH_FAILED'] : ['HTTP_REDIRECT_REFUSED', 'DISCOVERY_FAILED'];
  if (i >= 21 && i <= 27) return ['TOKEN_REQUEST_FAILED'];
  if ((i >= 31 && i <= 53) || (i >= 71 && i <= 76)) return ['ID_TOKEN_INVALID'];
  // [59] the authorization rows are checked by the legacy parser; the userinfo token itself by the JWT checks.
  if (i === 59 && (c.misbehaviour.userinfo ?? {}).auth_info !== undefined) return ['AUTHORIZATION_INFO_INVALID'];
  if (i >= 55 && i <= 59) return ['USERINFO_INVALID'];
  if (i === 65) return ['DPOP_FAILED'];
  if (i === 77) return ['KEY_SET_FETCH_FAILED', 'KEY_SET_INVALID', 'HTTP_UNEXPECTED_RESPONSE'];
  throw new Error(`no expectation for item ${i}`);
}

/** Endpoints that must not be reached once the client has refused at this item's stage. */
function forbiddenAfter(i: number): string[] {
  if (i <= 2) return ['par', 'authorize', 'token', 'userinfo'];
  if (i <= 19) return ['token', 'userinfo'];
  if (i <= 54 || i >= 70) return ['userinfo'];
  return [];
}

async function runFlow(txOut: { tx?: LoginTransaction }) {
  const cp = corppassFapiClient(h);
  const { url, transaction } = await cp.startLogin({ scope: 'openid authinfo tpauthinfo user.identity' });
  txOut.tx = transaction;
  return cp.completeLogin({ transaction, callback: await authorize(url) });
}

describe.each(CORPPASS_FAPI_CASES.map((c) => ({ c })))('item $c.item: $c.name', ({ c }) => {
  it(`${c.expect === 'accept' ? 'accepts' : 'rejects'}`, async () => {
    const provider = h.corppassFapi;
    const from = lastSeq(provider);
    provider.misbehave(c.misbehaviour);
    const out: { tx?: LoginTransaction } = {};
    if (c.expect === 'accept') {
      const login = await runFlow(out).catch((e: Error) => { throw new Error(`${(e as SingpassFlowsError).code}: ${e.message}`); });
      expect(login.user.uuid).toBe('3f1c2a7e-9b4d-4c1e-8a2f-5d6e7f809a1b');
      expect(login.roles.length).toBeGreaterThan(0);
      return;
    }
    await expectCleanRefusal(runFlow(out), {
      provider, from, item: c.item, codes: expectedCode(c), forbidden: forbiddenAfter(c.item),
      secrets: () => {
        const token = provider.requests().find((r) => r.seq > from && r.endpoint === 'userinfo')?.headers.authorization;
        return [out.tx?.codeVerifier, out.tx?.dpopKey?.d, typeof token === 'string' ? token.slice(5) : undefined, h.signingKey.privateKey.export({ format: 'jwk' }).d];
      },
    });
  });
});

describe('Corppass FAPI with iss turned on (the day Corppass adds it)', () => {
  it('follows discovery: iss becomes required without any configuration change', async () => {
    const on = await startHarness({ corppass: { issParameter: true } });
    try {
      const cp = corppassFapiClient(on);
      let s = await cp.startLogin();
      await expect(cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) })).resolves.toMatchObject({ entity: { id: '201500001A' } });
      on.corppassFapi.misbehave({ authIss: 'missing' });
      s = await cp.startLogin();
      const from = lastSeq(on.corppassFapi);
      const e = await cp.completeLogin({ transaction: s.transaction, callback: await authorize(s.url) }).then(() => undefined, (x: unknown) => x as SingpassFlowsError);
      expect(e?.code).toBe('LOGIN_ISSUER_MISMATCH');
      expect(endpointsSince(on.corppassFapi, from)).toEqual(['authorize']);
    } finally {
      await on.close();
    }
  });
});
