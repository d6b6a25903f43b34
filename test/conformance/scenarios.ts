/**
 * THE list of webhook-edge scenarios every front end must pass the same way (docs/faults.md, "Webhook deliveries:
 * one answer per edge"), over real HTTP against the sandbox: the sandbox's deliveries reach the front end through a
 * relay that records them and can present them again as they came, with another Bearer, without one, or garbled.
 * Each scenario asserts the HTTP status, the spec's error code where the table names one, and what became of the
 * sessions (the service's own log of hash calls, and the session's status as the front end stored it).
 *
 * The fault scenarios are in ./faults.ts; ./suite.ts runs both lists against one front end.
 */
import { SignJWT, generateKeyPair } from 'jose';
import type { Sandbox } from '../../sandbox';
import { createNotificationTokens } from '../../src/sign/notification-token';
import { WEBHOOK_ERROR_BODY } from '../../src/sign/wire';
import type { FrontEnd } from './front-ends';
import { startConformanceRelay, type ConformanceRelay, type FrontEndAnswer, type RecordedDelivery, type ReplayOptions } from './relay';

export interface ConformanceContext {
  sb: Sandbox;
  relay: ConformanceRelay;
  fe: FrontEnd;
}

export interface Scenario<Id extends string = ScenarioId> {
  id: Id;
  title: string;
  run(c: ConformanceContext): Promise<void>;
  /** The test's timeout when longer than the default (a front end killed and started again). */
  timeoutMs?: number;
}

export type ScenarioId = 'genuine' | 'copy' | 'otherSessionsBearer' | 'forgedBearer' | 'forgedToken' | 'notJson' | 'unknownSignRef' | 'endedNewEvent' | 'endedCopy';

const ENDED = ['completed', 'failed', 'expired'];

export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const hashCalls = (c: ConformanceContext, signRef: string) => c.sb.sign.hashCalls().filter((h) => h.signRef === signRef);
export const accepted = (c: ConformanceContext, signRef: string) => hashCalls(c, signRef).filter((h) => h.status === 200).length;
export const serviceState = (c: ConformanceContext, signRef: string) => c.sb.sign.session(signRef)?.state;
export const hashSubmitted = (c: ConformanceContext, signRef: string) => until(`the hash for ${signRef} at the service`, () => serviceState(c, signRef) === 'hash_submitted', 45_000);
export const ended = (c: ConformanceContext, signRef: string) => until(`${signRef} to end at ${c.fe.name}`, async () => {
  const s = await c.fe.status(signRef);
  return s !== undefined && ENDED.includes(s) ? s : undefined;
}, 90_000);
/** The front end's stored status once it settled: the same on two reads 300 ms apart. */
export const settledStatus = async (c: ConformanceContext, signRef: string) => until(`${signRef}'s status to settle`, async () => {
  const a = await c.fe.status(signRef);
  await new Promise((r) => setTimeout(r, 300));
  const b = await c.fe.status(signRef);
  return a !== undefined && a === b ? a : undefined;
});
/** Room for work a delivery should not have started to (wrongly) show. */
export const pause = (ms = 1500) => new Promise((r) => setTimeout(r, ms));

export function expectErrorBody(a: FrontEndAnswer, code?: string): void {
  expect(a.body).toBeDefined();
  expect(Object.keys(a.body!).sort()).toEqual(Object.values(WEBHOOK_ERROR_BODY).sort());
  if (code !== undefined) expect(a.body![WEBHOOK_ERROR_BODY.errorCode]).toBe(code);
}

/**
 * A session the user declined after scanning, its certificate delivery kept back by the relay (it can come after the
 * session ended): the decline (an error event) was answered 200 and the session is `failed` at the front end.
 */
async function declinedSession(c: ConformanceContext): Promise<{ ref: string; cert: RecordedDelivery; declined: RecordedDelivery }> {
  const ref = await c.fe.startSession('Declined.pdf');
  c.relay.hold(ref, 'user_cert');
  await c.sb.phone.scan(ref, { user: 'p256' });
  const cert = await c.relay.delivery(ref, 'user_cert');
  await c.sb.phone.reject(ref);
  const declined = await c.relay.delivery(ref, 'error');
  expect(declined.answer?.status).toBe(200);
  expect(await ended(c, ref)).toBe('failed');
  return { ref, cert, declined };
}

/**
 * A session's certificate delivery kept back by the relay, presented altered in each of `variants`' ways: each must
 * get 400 with the spec's error body, no hash call, the session's status unchanged; then the genuine delivery, as it
 * came, gets 200 and the session goes on (a refused forgery does not harm the session it names).
 */
async function refusedThenGenuine(c: ConformanceContext, name: string, variants: (d: RecordedDelivery) => Record<string, ReplayOptions> | Promise<Record<string, ReplayOptions>>): Promise<void> {
  const ref = await c.fe.startSession(name);
  c.relay.hold(ref, 'user_cert');
  await c.sb.phone.scan(ref, { user: 'p256' });
  const d = await c.relay.delivery(ref, 'user_cert');
  const before = await settledStatus(c, ref);
  const answers: Record<string, FrontEndAnswer> = {};
  for (const [what, o] of Object.entries(await variants(d))) answers[what] = await c.relay.replay(d, o);
  expect(Object.fromEntries(Object.entries(answers).map(([k, a]) => [k, a.status]))).toEqual(Object.fromEntries(Object.keys(answers).map((k) => [k, 400])));
  for (const a of Object.values(answers)) expectErrorBody(a);
  await pause();
  expect(hashCalls(c, ref)).toHaveLength(0);
  expect(await c.fe.status(ref)).toBe(before);
  expect((await c.relay.replay(d)).status).toBe(200);
  await hashSubmitted(c, ref);
  expect(accepted(c, ref)).toBe(1);
}

export const SCENARIOS: Scenario[] = [
  {
    id: 'genuine',
    title: 'a genuine certificate delivery: 200, and the session goes on (its hash reaches the service)',
    async run(c) {
      const ref = await c.fe.startSession('Genuine.pdf');
      await c.sb.phone.scan(ref, { user: 'p256' });
      const d = await c.relay.delivery(ref, 'user_cert');
      expect(d.answer?.status).toBe(200);
      await hashSubmitted(c, ref);
      expect(accepted(c, ref)).toBe(1);
    },
  },
  {
    id: 'copy',
    title: 'the same certificate delivery again (a copy): 200, still exactly one hash call at the service',
    async run(c) {
      const ref = await c.fe.startSession('Copy.pdf');
      await c.sb.phone.scan(ref, { user: 'p256' });
      const d = await c.relay.delivery(ref, 'user_cert');
      expect(d.answer?.status).toBe(200);
      await hashSubmitted(c, ref);
      const before = await settledStatus(c, ref);
      const again = await c.relay.replay(d);
      expect(again.status).toBe(200);
      await pause();
      expect(hashCalls(c, ref)).toHaveLength(1);
      expect(accepted(c, ref)).toBe(1);
      expect(await c.fe.status(ref)).toBe(before);
    },
  },
  {
    id: 'otherSessionsBearer',
    title: "session A's delivery with session B's Bearer: 400 INVALID_CLIENT_NOTIFICATION_TOKEN, both untouched; A completes on its genuine delivery",
    async run(c) {
      const a = await c.fe.startSession('A.pdf');
      const b = await c.fe.startSession('B.pdf');
      c.relay.hold(a, 'user_cert');
      await c.sb.phone.scan(a, { user: 'p256' });
      const da = await c.relay.delivery(a, 'user_cert');
      await c.sb.phone.scan(b, { user: 'p256' });
      const db = await c.relay.delivery(b, 'user_cert');
      expect(db.answer?.status).toBe(200);
      await hashSubmitted(c, b);
      const [beforeA, beforeB] = [await settledStatus(c, a), await settledStatus(c, b)];
      expect(da.bearer).not.toBe(db.bearer);
      const runsBefore = await c.fe.webhookRuns?.();

      const forged = await c.relay.replay(da, { bearer: db.bearer });
      expect(forged.status).toBe(400);
      expectErrorBody(forged, 'INVALID_CLIENT_NOTIFICATION_TOKEN');
      await pause();
      // refused at the door: no run started (where the engine records runs)
      if (runsBefore !== undefined) expect(await c.fe.webhookRuns!()).toBe(runsBefore);
      expect(hashCalls(c, a)).toHaveLength(0);
      expect(accepted(c, b)).toBe(1);
      expect(await c.fe.status(a)).toBe(beforeA);
      expect(await c.fe.status(b)).toBe(beforeB);

      // A's genuine delivery (as the service sent it) then runs: A completes, and so does B
      expect((await c.relay.replay(da)).status).toBe(200);
      await hashSubmitted(c, a);
      await c.sb.phone.approve(a);
      await c.sb.phone.approve(b);
      expect(await ended(c, a)).toBe('completed');
      expect(await ended(c, b)).toBe('completed');
      expect(accepted(c, a)).toBe(1);
      expect(accepted(c, b)).toBe(1);
    },
  },
  {
    id: 'forgedBearer',
    title: 'no Bearer, a Bearer this DSAP never issued, one of the wrong shape: 400 each, nothing runs; the genuine one then runs',
    async run(c) {
      await refusedThenGenuine(c, 'Forged Bearer.pdf', (d) => ({
        'no Bearer': { bearer: null },
        'a Bearer never issued': { bearer: createNotificationTokens({ secret: 'another-dsap-secret-that-this-front-end-never-had-42' }).issue() },
        'a Bearer of the wrong shape': { bearer: 'made-up-token' },
      }));
    },
  },
  {
    id: 'forgedToken',
    title: "a garbled JWT, a JWT the service did not sign (with the session's own Bearer): 400 each, nothing runs; the genuine one then runs",
    async run(c) {
      await refusedThenGenuine(c, 'Forged token.pdf', async (d) => {
        const token = (JSON.parse(d.body.toString('utf8')) as { token: string }).token;
        const [head, payload] = token.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>);
        const { privateKey } = await generateKeyPair('ES256');
        const selfSigned = await new SignJWT(payload!).setProtectedHeader({ alg: 'ES256', kid: String(head!.kid), typ: 'JWT' }).sign(privateKey);
        return {
          'a garbled JWT': { body: JSON.stringify({ token: `${token.slice(0, -12)}AAAAAAAAAAAA` }) },
          'a JWT the service did not sign': { body: JSON.stringify({ token: selfSigned }) },
        };
      });
    },
  },
  {
    id: 'notJson',
    title: "a body that is not JSON (with the session's own Bearer): 400, nothing runs; the genuine one then runs",
    async run(c) {
      await refusedThenGenuine(c, 'Not JSON.pdf', () => ({ 'a body that is not JSON': { body: 'not json at all' } }));
    },
  },
  {
    id: 'unknownSignRef',
    title: 'a genuine delivery for a sign_ref the front end never stored: 503 SERVER_SIDE_ERROR (the service delivers again)',
    async run(c) {
      // The session is created at the service directly (not through the front end) with a Bearer issued from the
      // front end's own notification secret: the Bearer passes the stateless check, the sign_ref has no record.
      const clientId = `conformance-direct-${c.fe.name.replace(/\W/g, '').toLowerCase()}`;
      const basic = 'conformance-direct-basic-secret';
      c.sb.sign.registerClient({ clientId, notificationUrl: c.relay.url, basicSecret: basic });
      const bearer = createNotificationTokens({ secret: c.fe.notificationSecret }).issue();
      const res = await fetch(`${c.sb.urls.signApi}/doc-signing-sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`${clientId}:${basic}`).toString('base64')}` },
        body: JSON.stringify({ client_notification_token: bearer, tenant_id: 'conformance' }),
      });
      expect(res.status).toBe(200);
      const ref = ((await res.json()) as { sign_ref: string }).sign_ref;
      await c.sb.phone.scan(ref, { user: 'p256' });
      const d = await c.relay.delivery(ref, 'user_cert');
      expect(d.bearer).toBe(bearer);
      expect(d.answer?.status).toBe(503);
      expectErrorBody(d.answer!, 'SERVER_SIDE_ERROR');
      // the service took the 503 as "deliver again", and got 503 again
      const attempts = await until('a second attempt of the delivery', () => {
        const log = c.sb.sign.deliveries().filter((x) => x.signRef === ref && x.requestType === 'user_cert' && x.status !== undefined);
        return log.length >= 2 ? log : undefined;
      });
      expect(attempts.map((x) => [x.attempt, x.status])).toEqual(attempts.map((_, i) => [i + 1, 503]));
      expect(await c.fe.status(ref)).toBeUndefined();
      expect(hashCalls(c, ref)).toHaveLength(0);
    },
  },
  {
    id: 'endedNewEvent',
    title: 'a new event for a session that ended (declined → failed): 400 SIGN_REF_NOT_FOUND, nothing runs',
    async run(c) {
      const { ref, cert } = await declinedSession(c);
      const late = await c.relay.replay(cert);
      expect(late.status).toBe(400);
      expectErrorBody(late, 'SIGN_REF_NOT_FOUND');
      await pause();
      expect(hashCalls(c, ref)).toHaveLength(0);
      expect(await c.fe.status(ref)).toBe('failed');
    },
  },
  {
    id: 'endedCopy',
    title: 'a copy of the event an ended session applied (the decline, again): 200, nothing runs',
    async run(c) {
      const { ref, declined } = await declinedSession(c);
      const copy = await c.relay.replay(declined);
      expect(copy.status).toBe(200);
      await pause();
      expect(hashCalls(c, ref)).toHaveLength(0);
      expect(await c.fe.status(ref)).toBe('failed');
    },
  },
];

