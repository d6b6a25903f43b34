/**
 * Both scenario lists against one front end: the webhook edges (./scenarios.ts), then the faults (./faults.ts), with
 * one sandbox, one relay and one front end for the file (started in beforeAll, stopped in afterAll), one scenario
 * after the other. `pending`: scenario → how this front end still differs (listed as `it.todo`, never run as a test
 * that cannot fail). `startTimeoutMs`: how long the front end may take to start (n8n: pack, install, start).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startSandbox } from '../../sandbox';
import { FAULT_SCENARIOS, clearFaults, type FaultScenarioId } from './faults';
import type { StartFrontEnd } from './front-ends';
import { startConformanceRelay } from './relay';
import { SCENARIOS, type ConformanceContext, type Scenario, type ScenarioId } from './scenarios';

export type Pending = Partial<Record<ScenarioId | FaultScenarioId, string>>;

/** The hand-over scenarios, until this front end's flow hands its signed PDF to a storage the suite can reach. */
export const HAND_OVER_PENDING = {
  handOverStorageDown: 'the flow does not acknowledge its storage of the signed PDF yet',
  handOverKilled: 'the flow does not acknowledge its storage of the signed PDF yet',
  handOverNeverAcknowledged: 'the flow does not acknowledge its storage of the signed PDF yet',
  storeDownWhileFinishing: 'the flow does not acknowledge its storage of the signed PDF yet',
} as const;


const DEFAULT_TIMEOUT_MS = 150_000;

export function conformanceSuite(startFrontEnd: StartFrontEnd, frontEndName: string, pending: Pending = {}, o: { startTimeoutMs?: number } = {}): void {
  const ctx = {} as ConformanceContext;
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-conformance-'));
    // sessions live 10 min (a restarted n8n takes a while); 6 attempts 200 ms apart outlast a short store outage
    ctx.sb = await startSandbox({ webhookRetryDelayMs: 200, webhookAttempts: 6, sessionTtlSeconds: 600 });
    ctx.relay = await startConformanceRelay();
    ctx.fe = await startFrontEnd(ctx.sb, dir);
    ctx.relay.target = ctx.fe.webhookUrl;
    ctx.sb.sign.registerClient({ clientId: ctx.fe.clientId, jwksUrl: ctx.fe.jwksUrl, notificationUrl: ctx.relay.url });
  }, o.startTimeoutMs ?? 120_000);

  afterAll(async () => {
    await ctx.fe?.stop();
    await ctx.relay?.close();
    await ctx.sb?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const run = (list: Scenario<string>[]) => {
    for (const s of list) {
      const why = pending[s.id as ScenarioId | FaultScenarioId];
      if (why !== undefined) {
        it.todo(`${s.title} — NOT YET in ${frontEndName}: ${why}`);
        continue;
      }
      it(s.title, async () => {
        try {
          await s.run(ctx);
        } catch (e) {
          (e as Error).message += `\n--- ${frontEndName} log ---\n${ctx.fe.log()}`;
          throw e;
        }
      }, s.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    }
  };

  describe(`webhook conformance: ${frontEndName}`, () => run(SCENARIOS));

  describe(`fault conformance: ${frontEndName}`, () => {
    // a scenario that failed half-way must not leave its fault, or its front end down, to the next one
    afterEach(async () => {
      await clearFaults(ctx);
      await ctx.fe.storeUp();
      if (!ctx.fe.running()) await ctx.fe.restart();
    }, 300_000);
    run(FAULT_SCENARIOS);
  });
}
