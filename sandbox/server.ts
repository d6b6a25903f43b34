import { startSandbox, type Sandbox, type SandboxOptions } from './index';

/** Human-readable summary printed when the sandbox starts (URLs a builder pastes into the nodes' credentials). */
export function describeSandbox(sb: Sandbox): string {
  const u = sb.urls;
  const lines = [
    `Sandbox running on ${sb.baseUrl} (127.0.0.1 only, TEST ONLY)`,
    '',
    'Document signing API',
    `  API base URL        ${u.signApi}`,
    `  assertion aud       ${u.signBase}   (also accepted: ${u.base})`,
    `  service key set     ${u.signKeys}`,
    `  register a DSAP     POST ${u.signBase}/sandbox/clients {"client_id","jwks_url","notification_url"}`,
    `  phone simulator     ${u.phone}`,
    `  fault switches      POST ${u.signBase}/sandbox/faults   (deliveries: GET ${u.signBase}/sandbox/deliveries, hash calls: GET ${u.signBase}/sandbox/hashes)`,
    '',
    'Test CA',
    `  root certificate    ${u.rootCert}${sb.rootCertPath ? `   (file: ${sb.rootCertPath})` : ''}`,
    `  intermediate        ${u.intermediateCert}`,
    `  OCSP responder      ${u.ocsp}`,
    `  timestamp (TSA)     ${u.tsa}`,
  ];
  if (u.corppass || u.singpass) {
    lines.push('', 'Login', ...(u.corppass ? [`  Corppass issuer     ${u.corppass}`] : []), ...(u.corppassFapi ? [`  Corppass FAPI 2.0   ${u.corppassFapi}`] : []), ...(u.singpass ? [`  Singpass issuer     ${u.singpass}`] : []));
  }
  const clients = sb.sign.clients();
  if (clients.length) lines.push('', `Registered DSAPs: ${clients.map((c) => c.clientId).join(', ')}`);
  if (sb.loginClientIds.length) lines.push(`Registered login clients (Corppass, Corppass FAPI 2.0, Singpass): ${sb.loginClientIds.join(', ')}`);
  return lines.join('\n');
}

/** Resolves on the first of SIGINT/SIGTERM (listeners removed afterwards). */
export function untilSignal(signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM']): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (s: NodeJS.Signals): void => {
      for (const x of signals) process.off(x, on);
      resolve(s);
    };
    for (const s of signals) process.on(s, on);
  });
}

/** Start the sandbox, print its URLs, run until `stop` resolves (default: Ctrl-C), then close it. */
export async function serveSandbox(
  opts: SandboxOptions,
  io: { log?: (line: string) => void; stop?: (sb: Sandbox) => Promise<unknown> } = {},
): Promise<void> {
  const log = io.log ?? ((l: string) => console.log(l));
  const sb = await startSandbox(opts);
  try {
    log(describeSandbox(sb));
    log('\nPress Ctrl-C to stop.');
    await (io.stop ? io.stop(sb) : untilSignal());
  } finally {
    await sb.close();
    log('Sandbox stopped.');
  }
}
