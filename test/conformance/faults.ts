/**
 * THE list of fault scenarios every front end must come through the same way (docs/faults.md, "Faults: one outcome
 * for every front end"), over real HTTP against the sandbox, faults switched with the sandbox's own controls (its
 * TSA / OCSP fault switch, the signing service's faults) and on the front end itself (its process SIGKILLed and
 * started again on the same files; its session folder taken away). Each asserts the same outcome everywhere: the
 * session's end status as the front end stored it, the result (level reached, `result.missing`) or the error, the
 * hash calls the service answered (one accepted, or none), and the signed PDF read back from the front end: one user
 * signature, valid against the sandbox root, at the level named.
 *
 * They change the sandbox's shared switches and stop the front end, so they run one after the other.
 */
import { verifyPdfSignatures, type PadesLevel } from '../../src/pades';
import type { TsaFailure } from '../../sandbox/pki';
import { HANDOVER_WINDOW_S, type Outcome } from './front-ends';
import { accepted, ended, expectErrorBody, hashCalls, hashSubmitted, pause, settledStatus, until, type ConformanceContext, type Scenario } from './scenarios';

export type FaultScenarioId = 'tsaDownThenUp' | 'tsaRejectionThenUp' | 'tsaRefusesForGood' | 'ocspDownWhileFinishing' | 'firstHashRefused'
  | 'hash503Then200' | 'killedDuringCertificateCheck' | 'killedAfterCertificate' | 'killedAfterHash' | 'killedAfterSignature' | 'storeDown'
  | 'handOverStorageDown' | 'handOverKilled' | 'handOverNeverAcknowledged' | 'storeDownWhileFinishing';

/** A front end stopped and started again: its start-up (n8n: up to 4 min) on top of the session. */
const RESTART_TIMEOUT_MS = 420_000;

/** Arm the sandbox TSA or OCSP responder to fail its next `n` requests (its HTTP fault switch, as a DSAP in another process would). */
async function caFaults(c: ConformanceContext, body: Record<string, unknown> = {}): Promise<{ tsa_fail: number; ocsp_fail: number }> {
  const res = await fetch(`${c.sb.baseUrl}/ca/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`/ca/faults answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { tsa_fail: number; ocsp_fail: number };
}

/** Everything switched off again (also after a scenario that failed half-way). */
export async function clearFaults(c: ConformanceContext): Promise<void> {
  await caFaults(c, { tsa_fail: 0, ocsp_fail: 0 });
  c.sb.ca.setOcspDelay(0);
  c.sb.sign.faults.reset();
}

/** A session started, scanned, its hash accepted by the service and the front end's record saying so. */
async function scanned(c: ConformanceContext, name: string): Promise<string> {
  const ref = await c.fe.startSession(name);
  await c.sb.phone.scan(ref, { user: 'p256' });
  await hashSubmitted(c, ref);
  await until(`${ref} hash_submitted at ${c.fe.name}`, async () => (await c.fe.status(ref)) === 'hash_submitted', 30_000);
  return ref;
}

/**
 * The session completed: one hash accepted by the service, and the PDF the front end hands on holds ONE user
 * signature, valid against the sandbox root, at `level`; `documentTimestamps` after it (B-LTA: one).
 */
async function completedWith(c: ConformanceContext, ref: string, level: PadesLevel): Promise<void> {
  expect(await ended(c, ref)).toBe('completed');
  expect(accepted(c, ref)).toBe(1);
  const report = await verifyPdfSignatures(await c.fe.signedPdf(ref), { trustedRoots: [c.sb.pki.root.certPem] });
  const users = report.signatures.filter((s) => s.type === 'signature');
  expect(users.map((s) => ({ valid: s.valid, level: s.level, trusted: s.chain.trusted }))).toEqual([{ valid: true, level, trusted: true }]);
  expect(report.signatures.filter((s) => s.type === 'docTimestamp')).toHaveLength(level === 'B-LTA' ? 1 : 0);
}

/** A responder fails its next `n` requests after the hash, the user approves: finishing is retried and the PDF ends at B-LTA. */
async function finishingRidesOut(c: ConformanceContext, name: string, responder: 'tsa' | 'ocsp', n: number, failure: number | TsaFailure): Promise<void> {
  const ref = await scanned(c, name);
  expect((await caFaults(c, { [`${responder}_fail`]: n, [`${responder}_failure`]: failure }))[`${responder}_fail`]).toBe(n);
  await c.sb.phone.approve(ref);
  await completedWith(c, ref, 'B-LTA');
  expect((await c.fe.outcome(ref))?.result?.missing).toBeUndefined();
  // every failure was met (finishing was tried again after them), none left over
  expect((await caFaults(c))[`${responder}_fail`]).toBe(0);
}

/** The session's stored record once `ok` says so (its phase, its hand-over). */
async function recordUntil(c: ConformanceContext, ref: string, what: string, ok: (o: Outcome) => boolean, ms = 90_000): Promise<Outcome> {
  let last: Outcome | undefined;
  try {
    return await until(`${ref}: ${what} at ${c.fe.name}`, async () => {
      last = await c.fe.outcome(ref);
      return last && ok(last) ? last : undefined;
    }, ms);
  } catch (e) {
    // where the session stood instead, so that a timeout says why
    throw new Error(`${(e as Error).message}; last seen: ${last ? JSON.stringify({ status: last.status, phase: last.phase, handOver: last.handOver, error: last.error }) : 'no record'}`);
  }
}

/** A session the user approved while the flow's storage is down (its hand-over cannot be stored). */
async function approvedWithStorageDown(c: ConformanceContext, name: string): Promise<string> {
  const ref = await scanned(c, name);
  await c.fe.storage.down();
  await c.sb.phone.approve(ref);
  return ref;
}

/** Finished, handed over, and the flow's storage refusing it (a hand-over failed, or one not acknowledged handed over again). */
const handOverRefused = (c: ConformanceContext, ref: string) => recordUntil(c, ref, 'a hand-over refused by the storage', (o) => o.phase === 'handingOver' && (o.handOver?.lastFailure !== undefined || (o.handOver?.attempts ?? 0) >= 2));

/**
 * The hand-over reached the flow's storage and was acknowledged: the session completed, and the storage holds the
 * very bytes the front end signed (one user signature, valid, at the level asked for).
 */
async function deliveredTo(c: ConformanceContext, ref: string): Promise<Outcome> {
  const o = await recordUntil(c, ref, 'the hand-over acknowledged', (r) => r.phase === 'completed');
  expect(o.handOver?.acknowledgedAt).toEqual(expect.any(Number));
  const stored = await until(`${ref}'s PDF in the flow's storage`, () => c.fe.storage.stored(ref), 30_000);
  expect(stored.equals(await c.fe.signedPdf(ref))).toBe(true);
  await completedWith(c, ref, 'B-LTA');
  return o;
}

export const FAULT_SCENARIOS: Scenario<FaultScenarioId>[] = [
  {
    id: 'tsaDownThenUp',
    title: 'the TSA down (503) for 3 requests after the user signed, then up: finishing retried, completed at B-LTA, one signature, one hash',
    run: (c) => finishingRidesOut(c, 'TSA down.pdf', 'tsa', 3, 503),
  },
  {
    id: 'tsaRejectionThenUp',
    title: 'the TSA answering rejection (systemFailure) twice, then recovering: finishing retried, completed at B-LTA, one signature',
    run: (c) => finishingRidesOut(c, 'TSA busy.pdf', 'tsa', 2, 'systemFailure'),
  },
  {
    id: 'tsaRefusesForGood',
    title: 'the TSA refusing every request (rejection badRequest): completed with the B-B PDF and result.missing (TSA_FAILED), one signature, the user never asked again',
    async run(c) {
      const ref = await scanned(c, 'TSA refuses.pdf');
      await caFaults(c, { tsa_fail: 1000, tsa_failure: 'badRequest' });
      await c.sb.phone.approve(ref);
      // on until the front end is done with the PDF: every step after the session (n8n's document steps) meets the refusal too
      await completedWith(c, ref, 'B-B');
      const out = await c.fe.outcome(ref);
      expect(out?.result).toMatchObject({ level: 'B-B', valid: true, missing: { stage: 'embed', code: 'TSA_FAILED' } });
      expect(hashCalls(c, ref).map((h) => h.status)).toEqual([200]);
    },
    timeoutMs: 240_000,
  },
  {
    id: 'ocspDownWhileFinishing',
    title: 'the OCSP responder down (503) for 3 requests while finishing (validation data): retried, completed at B-LTA, one signature',
    run: (c) => finishingRidesOut(c, 'OCSP down.pdf', 'ocsp', 3, 503),
  },
  {
    id: 'firstHashRefused',
    title: 'the first hash call refused (400): the session fails SIGN_REQUEST_REJECTED with the service\'s message, nothing resent, no PDF',
    async run(c) {
      const ref = await c.fe.startSession('Hash refused.pdf');
      c.sb.sign.faults.refuseHash(1, 'certificate not delivered yet');
      await c.sb.phone.scan(ref, { user: 'p256' });
      expect(await ended(c, ref)).toBe('failed');
      const failed = await c.fe.outcome(ref);
      expect(failed?.error).toMatchObject({ code: 'SIGN_REQUEST_REJECTED', message: expect.stringContaining('certificate not delivered yet') });
      // an ended session keeps neither the prepared document, the hash it was to send, nor the user's certificate
      expect(JSON.stringify(failed)).not.toMatch(/"prepared"|"submitting"|"certificate"/);
      await pause(8000); // rounds of every scheduler (n8n's resume schedule: 2 s, idle 5 s): an ended session is left alone
      expect(hashCalls(c, ref).map((h) => h.status)).toEqual([400]);
      expect(await c.fe.status(ref)).toBe('failed');
    },
  },
  {
    id: 'hash503Then200',
    title: 'the hash call answered 503, then 200: the saved hash sent again, one accepted; the session completes with one signature',
    async run(c) {
      const ref = await c.fe.startSession('Hash 503.pdf');
      c.sb.sign.faults.serviceError(1, 503); // the next call of the API: this session's hash call
      await c.sb.phone.scan(ref, { user: 'p256' });
      await hashSubmitted(c, ref);
      expect(hashCalls(c, ref).map((h) => h.status)).toEqual([503, 200]);
      await c.sb.phone.approve(ref);
      await completedWith(c, ref, 'B-LTA');
      // the hash the user signed is the one the service accepted, and the only one it ever saw with a body
      expect(hashCalls(c, ref).filter((h) => h.docHash !== undefined)).toHaveLength(1);
    },
  },
  {
    id: 'killedDuringCertificateCheck',
    title: 'the front end SIGKILLed a second after it answered the certificate 200, its OCSP check still waiting: started again, the session goes on (one hash) and completes',
    async run(c) {
      const ref = await c.fe.startSession('Killed during check.pdf');
      c.sb.ca.setOcspDelay(4000); // the certificate check's OCSP answer comes late (within the client's 10 s)
      const scanning = c.sb.phone.scan(ref, { user: 'p256' });
      expect((await c.relay.delivery(ref, 'user_cert')).answer?.status).toBe(200);
      await pause(1000);
      await c.fe.kill();
      c.sb.ca.setOcspDelay(0);
      await scanning;
      expect(hashCalls(c, ref)).toHaveLength(0);
      await c.fe.restart();
      // a certificate claimed and left is taken over once idle (the session policy's 45 s)
      await until(`the hash for ${ref} at the service`, () => c.sb.sign.session(ref)?.state === 'hash_submitted', 120_000);
      await until(`${ref} hash_submitted at ${c.fe.name}`, async () => (await c.fe.status(ref)) === 'hash_submitted', 60_000);
      await c.sb.phone.approve(ref);
      await completedWith(c, ref, 'B-LTA');
    },
    timeoutMs: RESTART_TIMEOUT_MS,
  },
  {
    id: 'killedAfterCertificate',
    title: 'the front end SIGKILLed after the certificate (hash saved, its call not through), started again: the same hash sent, one accepted, completed',
    async run(c) {
      const ref = await c.fe.startSession('Killed after certificate.pdf');
      c.sb.sign.faults.serviceError(1000, 503); // the hash call does not get through until the restart
      await c.sb.phone.scan(ref, { user: 'p256' });
      await until(`a hash call for ${ref}`, () => hashCalls(c, ref).length > 0, 30_000);
      await c.fe.kill();
      c.sb.sign.faults.reset();
      await c.fe.restart();
      await hashSubmitted(c, ref);
      const calls = hashCalls(c, ref).map((h) => h.status);
      expect(calls.slice(0, -1).every((s) => s === 503) && calls.at(-1) === 200).toBe(true);
      await until(`${ref} hash_submitted at ${c.fe.name}`, async () => (await c.fe.status(ref)) === 'hash_submitted', 60_000);
      await c.sb.phone.approve(ref);
      await completedWith(c, ref, 'B-LTA');
    },
    timeoutMs: RESTART_TIMEOUT_MS,
  },
  {
    id: 'killedAfterHash',
    title: 'the front end SIGKILLed after the hash was accepted, started again: the signature applied, completed, one hash',
    async run(c) {
      const ref = await scanned(c, 'Killed after hash.pdf');
      await c.fe.kill();
      await c.fe.restart();
      await c.sb.phone.approve(ref);
      await completedWith(c, ref, 'B-LTA');
      expect(hashCalls(c, ref).map((h) => h.status)).toEqual([200]);
    },
    timeoutMs: RESTART_TIMEOUT_MS,
  },
  {
    id: 'killedAfterSignature',
    title: 'the front end SIGKILLed after the signature was saved (finishing waiting for the TSA), started again: finished once, B-LTA, one signature',
    async run(c) {
      const ref = await scanned(c, 'Killed after signature.pdf');
      await caFaults(c, { tsa_fail: 1000 });
      await c.sb.phone.approve(ref);
      await until(`${ref} signed and waiting to finish at ${c.fe.name}`, async () => {
        const o = await c.fe.outcome(ref);
        return o?.status === 'signed' && o.lastFinishFailure !== undefined;
      }, 60_000);
      await c.fe.kill();
      await caFaults(c, { tsa_fail: 0 });
      await c.fe.restart();
      await completedWith(c, ref, 'B-LTA');
      expect((await c.fe.outcome(ref))?.result?.missing).toBeUndefined();
    },
    timeoutMs: RESTART_TIMEOUT_MS,
  },
  {
    id: 'storeDown',
    title: 'the session store down when the certificate arrives: answered 503 (the service delivers again); back up, the session goes on and completes',
    async run(c) {
      const ref = await c.fe.startSession('Store down.pdf');
      await settledStatus(c, ref);
      await c.fe.storeDown();
      let up = false;
      let scanning: Promise<unknown> = Promise.resolve();
      try {
        // the scan's promise ends with the delivery's last attempt: the store comes back while the service retries
        scanning = c.sb.phone.scan(ref, { user: 'p256' });
        const first = await c.relay.delivery(ref, 'user_cert');
        expect(first.answer?.status).toBe(503);
        expectErrorBody(first.answer!, 'SERVER_SIDE_ERROR');
        expect(hashCalls(c, ref)).toHaveLength(0);
        await c.fe.storeUp();
        up = true;
      } finally {
        if (!up) await c.fe.storeUp();
      }
      await scanning;
      await hashSubmitted(c, ref);
      const answers = c.relay.deliveries(ref).filter((d) => d.type === 'user_cert').map((d) => d.answer?.status);
      expect(answers[0]).toBe(503);
      expect(answers.at(-1)).toBe(200);
      await until(`${ref} hash_submitted at ${c.fe.name}`, async () => (await c.fe.status(ref)) === 'hash_submitted', 60_000);
      await c.sb.phone.approve(ref);
      await completedWith(c, ref, 'B-LTA');
    },
  },
  {
    id: 'handOverStorageDown',
    title: 'the flow\'s storage down when the signed PDF is handed over, then back: handed over again, stored once acknowledged (the same bytes), one signature',
    async run(c) {
      const ref = await approvedWithStorageDown(c, 'Storage down.pdf');
      await handOverRefused(c, ref);
      expect(await c.fe.storage.stored(ref)).toBeUndefined();
      await c.fe.storage.up();
      const o = await deliveredTo(c, ref);
      expect(o.handOver?.attempts).toBeGreaterThanOrEqual(2);
    },
  },
  {
    id: 'handOverKilled',
    title: 'killed after the session finished, before the hand-over was acknowledged: after the restart the PDF is handed over again and stored, one signature',
    async run(c) {
      const ref = await approvedWithStorageDown(c, 'Killed at hand-over.pdf');
      await handOverRefused(c, ref);
      await c.fe.kill();
      await c.fe.storage.up();
      await c.fe.restart();
      await deliveredTo(c, ref);
      expect(hashCalls(c, ref).map((h) => h.status)).toEqual([200]);
    },
    timeoutMs: RESTART_TIMEOUT_MS,
  },
  {
    id: 'handOverNeverAcknowledged',
    title: 'a flow whose storage never takes the PDF: handed over again until the hand-over window closes, then undelivered with the reason; nothing after',
    async run(c) {
      const ref = await approvedWithStorageDown(c, 'Never stored.pdf');
      const o = await recordUntil(c, ref, 'undelivered', (r) => r.phase === 'undelivered', (HANDOVER_WINDOW_S + 60) * 1000);
      expect(o.status).toBe('completed'); // the user signed: the service's session completed
      expect(o.handOver?.attempts).toBeGreaterThanOrEqual(2);
      expect(o.handOver?.undelivered).toMatchObject({ code: 'HANDOVER_UNACKNOWLEDGED', message: expect.stringMatching(/never acknowledged/) });
      await c.fe.storage.up();
      await pause(8000); // rounds of every scheduler: an undelivered session is not handed over any more
      expect(await c.fe.storage.stored(ref)).toBeUndefined();
      expect((await c.fe.outcome(ref))?.phase).toBe('undelivered');
    },
    timeoutMs: (HANDOVER_WINDOW_S + 150) * 1000,
  },
  {
    id: 'storeDownWhileFinishing',
    title: 'the session store down for 4 s while finishing waits for the TSA: finishing resumes, the PDF reaches the flow\'s storage at B-LTA, one signature',
    async run(c) {
      const ref = await scanned(c, 'Store down while finishing.pdf');
      await caFaults(c, { tsa_fail: 2, tsa_failure: 503 });
      await c.sb.phone.approve(ref);
      await recordUntil(c, ref, 'finishing deferred by the TSA', (o) => o.status === 'signed' && o.lastFinishFailure !== undefined, 60_000);
      await c.fe.storeDown();
      await pause(4000);
      await c.fe.storeUp();
      await deliveredTo(c, ref);
    },
  },
];
