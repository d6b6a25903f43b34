/**
 * The sandbox's Corppass behaves like the real one by default (no `iss` on redirects, flag false in discovery), with a
 * switch for the day Corppass turns `iss` on: `startSandbox({ corppassIssParameter })` and `--corppass-iss`.
 */
import { startSandbox } from '../../../sandbox';
import { parseSandboxArgs } from '../../../src/cli/commands/sandbox';

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
