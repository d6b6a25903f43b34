/**
 * The sandbox's Corppass behaves like the real one by default (no `iss` on redirects, flag false in discovery), with a
 * switch for the day Corppass turns `iss` on: `startSandbox({ corppassIssParameter })` and `--corppass-iss`.
 */
import { startSandbox } from '../../../sandbox';
import { parseSandboxArgs } from '../../../cli/commands/sandbox';

const flag = async (issuer: string) =>
  ((await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>).authorization_response_iss_parameter_supported;

it('--corppass-iss sets corppassIssParameter; off by default', () => {
  expect(parseSandboxArgs(['--no-persist']).corppassIssParameter).toBeUndefined();
  expect(parseSandboxArgs(['--no-persist', '--corppass-iss']).corppassIssParameter).toBe(true);
});

it.each([[undefined, false], [true, true]] as const)('startSandbox({ corppassIssParameter: %s }): Corppass (legacy and FAPI) advertises %s; Singpass always true', async (on, expected) => {
  const sb = await startSandbox({ port: 0, corppassIssParameter: on });
  try {
    expect(await flag(sb.urls.corppass)).toBe(expected);
    expect(await flag(sb.urls.corppassFapi)).toBe(expected);
    expect(await flag(sb.urls.singpass)).toBe(true);
  } finally {
    await sb.close();
  }
});

describe('login clients registered at start (--login-client-id, startSandbox({ loginClients }))', () => {
  const argv = ['--no-persist', '--login-client-id', 'rp-1', '--login-jwks-url', 'http://127.0.0.1:1880/jwks',
    '--login-redirect-uri', 'http://127.0.0.1:1880/corppass/callback', '--login-redirect-uri', 'http://127.0.0.1:1880/singpass/callback'];

  it('the options become one registration with every redirect URI; a partial set names what is missing', () => {
    expect(parseSandboxArgs(argv).loginClients).toEqual([{
      clientId: 'rp-1', jwksUrl: 'http://127.0.0.1:1880/jwks',
      redirectUris: ['http://127.0.0.1:1880/corppass/callback', 'http://127.0.0.1:1880/singpass/callback'],
    }]);
    expect(parseSandboxArgs(['--no-persist']).loginClients).toBeUndefined();
    expect(() => parseSandboxArgs(['--login-client-id', 'rp-1'])).toThrow(/--login-jwks-url.*--login-redirect-uri/);
    expect(() => parseSandboxArgs([...argv, '--login-redirect-uri', 'javascript:alert(1)'])).toThrow(/--login-redirect-uri must be an http\(s\) URL/);
  });

  it('each provider knows the registered client over HTTP and still refuses an unknown one', async () => {
    const sb = await startSandbox({ ...parseSandboxArgs(argv), port: 0 });
    try {
      // A token request with a malformed client assertion: an unknown client_id is refused as unknown; a registered
      // one gets as far as the assertion's header.
      const tokenError = async (endpoint: string, clientId: string) => {
        const body = new URLSearchParams({
          grant_type: 'authorization_code', code: 'x', client_id: clientId,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: 'e30.e30.c2ln',
        });
        const r = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
        return ((await r.json()) as { error_description?: string }).error_description ?? '';
      };
      for (const p of [sb.corppass, sb.corppassFapi, sb.singpass]) {
        expect(await tokenError(p.tokenEndpoint, 'someone-else')).toMatch(/unknown client_id/);
        expect(await tokenError(p.tokenEndpoint, 'rp-1')).toMatch(/client assertion rejected: header typ/);
      }
      expect(sb.loginClientIds).toEqual(['rp-1']);
    } finally {
      await sb.close();
    }
  });
});
