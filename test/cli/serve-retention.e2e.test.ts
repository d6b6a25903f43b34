/**
 * `serve` applies the session policy's retention: a session that ended longer ago than --keep-ended-days is deleted
 * from the store with its PDFs (checked at start and at each interval), in memory and in a folder; one still within
 * it stays. Real HTTP against the sandbox, serve in-process with a retention of a few seconds.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSandbox, type Sandbox } from '../../sandbox';
import { startServe, type RunningServer } from '../../cli/commands/serve';
import { generateClientKeys } from '../../src/keys';
import { samplePdf } from '../pades/ltv-helpers';
import { until } from '../helpers/poll';

const APPLICATION_KEY = 'the-applications-key-to-sessions-0123456789';
const APP = { authorization: `Bearer ${APPLICATION_KEY}` };

describe.each(['memory', 'a folder'] as const)('serve: ended sessions leave the store after the retention (%s)', (kind) => {
  let sandbox: Sandbox;
  let serve: RunningServer;
  let dir: string;
  const log: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'serve-retention-'));
    sandbox = await startSandbox({ autoPhone: true });
    writeFileSync(join(dir, 'root.pem'), sandbox.pki.root.certPem);
    const config = {
      signApiBaseUrl: sandbox.urls.signApi, clientId: 'retention-dsap', signingKey: (await generateClientKeys()).signing,
      serviceKeySetUrl: sandbox.urls.signKeys, tsaUrl: sandbox.urls.tsa, trustedRoots: ['root.pem'],
      domainName: 'retention.example.sg', notificationSecret: 'the-same-secret-in-every-process-0123456789', applicationKey: APPLICATION_KEY,
    };
    serve = await startServe({
      configText: JSON.stringify(config), baseDir: dir, port: 0, host: '127.0.0.1', ...(kind === 'a folder' ? { store: join(dir, 'store') } : {}),
      keepEndedMs: 4000, cleanUpIntervalMs: 1000, log: (l) => log.push(l),
    });
    sandbox.sign.registerClient({ clientId: 'retention-dsap', jwksUrl: `${serve.url}/jwks`, notificationUrl: `${serve.url}/webhook` });
  }, 60_000);

  afterAll(async () => {
    sandbox?.phone.auto(false);
    await serve?.close();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a completed session is readable, then deleted with its PDF once ended longer than the retention', async () => {
    const res = await fetch(`${serve.url}/sessions?name=Kept.pdf&level=B-B`, { method: 'POST', body: new Uint8Array(await samplePdf('Kept')), headers: { ...APP, 'content-type': 'application/pdf' } });
    expect(res.status).toBe(201);
    const { signRef } = (await res.json()) as { signRef: string };
    const status = async () => (await fetch(`${serve.url}/sessions/${signRef}`, { headers: APP })).status;
    await until(async () => {
      const r = await fetch(`${serve.url}/sessions/${signRef}`, { headers: APP });
      return r.status === 200 && ((await r.json()) as { status: string }).status === 'completed' ? true : undefined;
    }, 'the session to complete');
    // within the retention: the session and its signed PDF are still served
    expect((await fetch(`${serve.url}/sessions/${signRef}/signed.pdf`, { headers: APP })).status).toBe(200);
    // past it (4 s, checked every second): gone, and said so in the log
    await until(async () => ((await status()) === 404 ? true : undefined), 'the clean-up', 15_000);
    // the record goes first; the line comes once the whole clean-up (PDFs, deliveries) is done
    await until(async () => (log.some((l) => /^clean-up: 1 ended session\(s\) deleted \(ended more than 4 s ago\)$/.test(l)) ? true : undefined), 'the clean-up\'s log line', 5_000);
    if (kind === 'a folder') {
      const left = readdirSync(join(dir, 'store')).filter((f) => f.includes(signRef));
      // the record and the unsigned PDF went; the signed PDF is the product and stays in the folder for the operator
      expect(left).toEqual([`${signRef}-signed.pdf`]);
    } else {
      expect(existsSync(join(dir, 'store'))).toBe(false);
    }
  }, 60_000);
});
