/**
 * The session engine's fakes, shared by the engine's and the driver's fast tests: a scripted signing API client (its
 * typed errors checked against the real client's in engine-transitions.test.ts), a fake webhook verifier, the sandbox's
 * test PKI answering OCSP, TSA and AIA requests IN PROCESS through the engine's `fetch`, a clock the test moves, and
 * helpers that bring a session to each phase. Call `loadFakes()` in a `beforeAll`.
 */
import { randomBytes, randomUUID, type KeyObject } from 'node:crypto';
import { createTestPki, OcspResponder, TimeStampAuthority, type IssuedCert, type TestPki } from '../../sandbox/pki';
import { signDigest } from '../../sandbox/phone';
import { SingpassFlowsError } from '../../src/errors';
import type { Fetch } from '../../src/http';
import { RemoteKeySet } from '../../src/keys';
import { verifyPdfSignatures } from '../../src/pades/verify';
import {
  createNotificationTokens, readBearer, SigningApiClient, type CreateSessionInput, type DocumentHashInput, type SigningEvent,
  type WebhookRequest, type WebhookResult, type WebhookVerifier,
} from '../../src/sign';
import { readUserCertificate } from '../../src/sign/user-certificate';
import {
  createSigningEngine, MemorySessionStore, isAtSavePoint, isCertificateClaimed, isSessionEnded, nextStep, sessionPhase,
  type SessionAction, type SessionPhase, type SessionRecord, type SessionStep, type SigningEngineOptions, type StepOptions, type VerifiedDelivery,
} from '../../src/session';
import { samplePdf } from '../pades/ltv-helpers';

/** The PKI's base URL: written into the certificates' AIA, never resolved (the engine's fetch routes it in process). */
export const PKI_BASE = 'http://pki.engine-transitions.invalid';
export const TSA_URL = `${PKI_BASE}/ca/tsa`;
/** What the fake service answers as `expires_at`: the session's lifetime before the scan. */
export const SESSION_SECONDS = 120;
export const SIGN_API = 'https://sign.engine-transitions.invalid/api/v1';

export let pki: TestPki;
export let ocsp: OcspResponder;
export let tsa: TimeStampAuthority;
export let pdf: Buffer;
export const tokens = createNotificationTokens({ secret: randomBytes(32).toString('hex') });

// ---------------------------------------------------------------------------------------------------------------
// The fakes

/** A clock the test moves: starts now (whole seconds, as the records count), never moves by itself. */
export class TestClock {
  now = Math.floor(Date.now() / 1000) * 1000;
  readonly fn = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
  to(ms: number): void {
    this.now = ms;
  }
}

/**
 * The sandbox's OCSP responder, TSA and CA certificates behind a fetch (as sandbox/pki/service.ts wires them over
 * HTTP), answering at the test clock's time; `failNext` makes the next n requests to one responder answer 503.
 */
export class InProcessPki {
  readonly requests = { ocsp: 0, tsa: 0, certificates: 0 };
  private readonly failing = { ocsp: { n: 0, after: 0 }, tsa: { n: 0, after: 0 } };
  constructor(private readonly clock: TestClock) {}

  /** The next `n` requests to `responder` answer HTTP 503, after `after` good ones. */
  failNext(responder: 'ocsp' | 'tsa', n: number, after = 0): void {
    this.failing[responder] = { n, after };
  }

  readonly fetch: Fetch = async (url, init) => {
    const u = new URL(url);
    if (u.origin !== PKI_BASE) throw new TypeError(`fetch failed: ${u.origin} is not reachable from this test`);
    const method = init?.method ?? 'GET';
    const body = init?.body ? Buffer.from(init.body as Uint8Array) : Buffer.alloc(0);
    const answer = (status: number, bytes: Buffer, type: string): Response => new Response(new Uint8Array(bytes), { status, headers: { 'content-type': type } });
    const certificates: Record<string, Buffer> = {
      '/ca/root.crt': pki.root.certDer, '/ca/intermediate.crt': pki.intermediate.certDer, '/ca/tsa.crt': pki.tsa.certDer,
    };
    if (method === 'GET' && certificates[u.pathname]) {
      this.requests.certificates++;
      return answer(200, certificates[u.pathname], 'application/pkix-cert');
    }
    const responder = method === 'POST' && u.pathname === '/ca/ocsp' ? 'ocsp' : method === 'POST' && u.pathname === '/ca/tsa' ? 'tsa' : undefined;
    if (!responder) return answer(404, Buffer.from('no such PKI route'), 'text/plain');
    this.requests[responder]++;
    const f = this.failing[responder];
    if (f.after > 0) f.after--;
    else if (f.n > 0) {
      f.n--;
      return answer(503, Buffer.from(`${responder} failed this request (test)`), 'text/plain');
    }
    return responder === 'ocsp'
      ? answer(200, await ocsp.respond(body, this.clock.now), 'application/ocsp-response')
      : answer(200, await tsa.respond(body, this.clock.now), 'application/timestamp-reply');
  };
}

/**
 * The typed errors the real `SigningApiClient.submitDocumentHash` throws (src/sign/client.ts), one factory per
 * answer of the service; `resubmission` is the call's option. Checked against the real client at the end of this file.
 */
export const refuse = {
  /** 400: the service refuses the request (e.g. a hash already submitted, a certificate not delivered yet). */
  rejected: (serviceMessage: string) => (signRef: string, resubmission: boolean): SingpassFlowsError => {
    const e = new SingpassFlowsError('SIGN_REQUEST_REJECTED', `The signing service rejected the request to submit the document hash (HTTP 400): ${serviceMessage}`, { status: 400, retryable: false, serviceCode: 'ARGUMENTS_NOT_VALID' });
    if (resubmission) {
      e.details.possiblyAccepted = true;
      e.message += '. An earlier attempt got no clear answer and may have been accepted: wait for the signature webhook before starting over';
    }
    return e;
  },
  /** 503 twice (the client retries once). */
  unavailable: () => (): SingpassFlowsError => new SingpassFlowsError('SIGN_SERVICE_ERROR', 'The signing service failed to submit the document hash (HTTP 503); try again later', { status: 503, retryable: true, attempts: 2 }),
  /** 501: a 5xx the client marks not retryable (the service will not do this later either). */
  notImplemented: () => (): SingpassFlowsError => new SingpassFlowsError('SIGN_SERVICE_ERROR', 'The signing service failed to submit the document hash (HTTP 501); try again later', { status: 501, retryable: false }),
  rateLimited: () => (): SingpassFlowsError => new SingpassFlowsError('SIGN_RATE_LIMITED', 'The signing service is rate-limiting us; try again later', { status: 429, retryable: true }),
  signRefNotFound: () => (): SingpassFlowsError => new SingpassFlowsError('SIGN_REF_NOT_FOUND', 'The signing session is unknown or has expired; start a new session: no such session', { status: 404, retryable: false, serviceCode: 'SIGN_REF_NOT_FOUND' }),
  /** No answer, twice (the client retries once). */
  timeout: () => (signRef: string): SingpassFlowsError => {
    const url = `${SIGN_API}/doc-signing-sessions/${encodeURIComponent(signRef)}/hash`;
    return new SingpassFlowsError('HTTP_TIMEOUT', `No answer from ${url} within 10000 ms`, { url, retryable: true, attempts: 2 });
  },
};
export type Refusal = (signRef: string, resubmission: boolean) => SingpassFlowsError;

export interface HashCall { signRef: string; input: DocumentHashInput; resubmission: boolean }

/** The signing API client as the engine uses it, scripted per test: each hash call takes the next answer (default: accepted). */
export class FakeSigningClient implements Pick<SigningApiClient, 'createSession' | 'submitDocumentHash'> {
  readonly sessions: CreateSessionInput[] = [];
  readonly hashCalls: HashCall[] = [];
  private readonly answers: (Refusal | 'accept')[] = [];
  constructor(private readonly clock: TestClock, private readonly log: string[]) {}

  /** Script the next hash calls' answers, in order. */
  answer(...answers: (Refusal | 'accept')[]): this {
    this.answers.push(...answers);
    return this;
  }

  async createSession(input: CreateSessionInput) {
    this.sessions.push(input);
    const n = this.sessions.length;
    return { signRef: `transitions-${randomUUID()}`, qrPayload: `https://app.engine-transitions.invalid/qr/${n}`, expiresAt: Math.floor(this.clock.now / 1000) + SESSION_SECONDS };
  }

  async submitDocumentHash(signRef: string, input: DocumentHashInput, options: { resubmission?: boolean } = {}): Promise<void> {
    const resubmission = options.resubmission === true;
    this.hashCalls.push({ signRef, input, resubmission });
    this.log.push(`hash(resubmission=${resubmission})`);
    const next = this.answers.shift() ?? 'accept';
    if (next !== 'accept') throw next(signRef, resubmission);
  }
}

/**
 * The engine's webhook verifier, faked: the "body" carries the event itself (no JWT), and only the Bearer check of
 * the real verifier is kept (presented Bearer = the `expectedToken` the engine passes), plus duplicate detection.
 */
export class FakeVerifier implements WebhookVerifier {
  readonly keySet = new RemoteKeySet('https://keys.engine-transitions.invalid/keys.json', { fetch: async () => { throw new Error('not used by these tests'); } });
  readonly expected: unknown[] = [];
  private readonly seen = new Set<string>();
  async handle(request: WebhookRequest): Promise<WebhookResult> {
    this.expected.push(request.expectedToken);
    const presented = readBearer(request.headers);
    const event = (request.body as { event: SigningEvent }).event;
    // the front door names the token by sign_ref (the session's, looked up in its store), as the real verifier calls it
    const expected = typeof request.expectedToken === 'function' ? await request.expectedToken(event.signRef) : request.expectedToken;
    if (!presented || presented !== expected) {
      return { response: { status: 400, body: { error_code: 'INVALID_CLIENT_NOTIFICATION_TOKEN' } }, duplicate: false, error: { code: 'WEBHOOK_UNAUTHORIZED', message: 'Bearer refused (fake verifier)' } };
    }
    const key = `${event.type}:${event.signRef}:${event.issuedAt}`;
    const first = !this.seen.has(key);
    this.seen.add(key);
    return { response: { status: 200 }, event, duplicate: !first };
  }
  async warmUp(): Promise<void> {}
}

// ---------------------------------------------------------------------------------------------------------------
// One engine per test, and the session's steps

export interface Setup {
  clock: TestClock;
  client: FakeSigningClient;
  net: InProcessPki;
  verifier: FakeVerifier;
  engine: ReturnType<typeof createSigningEngine>;
  /** Steps narrated since the last `taken()`. */
  steps: SessionStep[];
  /** Order of saves and hash calls. */
  log: string[];
  /** Step options narrating into `steps`, plus `more`. */
  opts(more?: StepOptions): StepOptions;
  /** A `save` that records (in `log` and `saved`) and answers `win`. */
  saver(win?: boolean): { save: (r: SessionRecord) => boolean; saved: SessionRecord[] };
  /** The names of the steps narrated since the last call (and forget them). */
  taken(): string[];
}

export function setup(options: Partial<SigningEngineOptions> = {}): Setup {
  const clock = new TestClock();
  const log: string[] = [];
  const client = new FakeSigningClient(clock, log);
  const net = new InProcessPki(clock);
  const verifier = new FakeVerifier();
  const engine = createSigningEngine({
    // The engine calls only these two methods; the class's private members make the cast necessary.
    client: client as unknown as SigningApiClient,
    verifier, notificationTokens: tokens, trustedRoots: [pki.root.certDer], tsaUrl: TSA_URL,
    domainName: 'transitions.example.sg', tenantId: 'engine transitions', fetch: net.fetch, clock: clock.fn,
    ...options,
  });
  const steps: SessionStep[] = [];
  return {
    clock, client, net, verifier, engine, steps, log,
    opts: (more = {}) => ({ onStep: (s) => void steps.push(s), ...more }),
    saver(win = true) {
      const saved: SessionRecord[] = [];
      return {
        saved,
        save: (r) => {
          saved.push(r);
          log.push(`save(attempts=${r.submitting?.attempts})`);
          return win;
        },
      };
    },
    taken: () => steps.splice(0).map((s) => s.step),
  };
}

export const ACTION_OF: Record<SessionPhase, SessionAction> = {
  waitingForScan: 'expire', certificateClaimed: 'continueCertificate', atSavePoint: 'submitHash', hashSubmitted: 'expire',
  signed: 'finish', handingOver: 'handOver', completed: 'forget', undelivered: 'forget', failed: 'forget', expired: 'forget',
};

/** The record is at `phase`, every predicate and `nextStep` agree; returns nextStep's answer. */
export function expectStop(record: SessionRecord, phase: SessionPhase, policy: { scanExtensionSeconds?: number } = {}): { action: SessionAction; at: number } {
  expect(record.phase).toBe(phase); // stored, not only read from the fields
  expect(sessionPhase(record)).toBe(phase);
  expect(isAtSavePoint(record)).toBe(phase === 'atSavePoint');
  expect(isCertificateClaimed(record)).toBe(phase === 'certificateClaimed');
  expect(isSessionEnded(record)).toBe(['completed', 'undelivered', 'failed', 'expired'].includes(phase));
  const next = nextStep(record, policy);
  expect(next.action).toBe(ACTION_OF[phase]);
  return next;
}

/** An ended record keeps neither the user's certificate nor the prepared state nor the save points' bookkeeping. */
export function expectNoSessionData(record: SessionRecord): void {
  expect(record.state.certificate).toBeUndefined();
  expect(record.prepared).toBeUndefined();
  expect(record.submitting).toBeUndefined();
  expect(record.lastSubmitFailure).toBeUndefined();
  expect(record.lastFinishFailure).toBeUndefined();
}

export function certificateDelivery(record: SessionRecord, user: IssuedCert = pki.users.p256, t?: Setup): VerifiedDelivery {
  return {
    event: {
      type: 'certificate', signRef: record.state.signRef, nonce: randomBytes(16).toString('base64url'),
      certificate: readUserCertificate(user.certDer), issuedAt: Math.floor((t?.clock.now ?? Date.now()) / 1000),
    },
    notificationToken: record.state.clientNotificationToken,
  };
}

/** The phone's answer: the user's key over the prepared hash (not hashed again). */
export function signatureDelivery(record: SessionRecord, o: { documentHash?: string; key?: KeyObject } = {}): VerifiedDelivery {
  const documentHash = o.documentHash ?? record.state.documentHash ?? record.submitting!.documentHash;
  return {
    event: {
      type: 'signature', signRef: record.state.signRef, documentHash,
      signature: signDigest(Buffer.from(documentHash, 'hex'), o.key ?? pki.users.p256.privateKey).toString('hex'), issuedAt: Math.floor(Date.now() / 1000),
    },
    notificationToken: record.state.clientNotificationToken,
  };
}

export async function started(t: Setup, level: SessionRecord['request']['level'] = 'B-T'): Promise<SessionRecord> {
  return (await t.engine.start(pdf, { documentName: 'Contract.pdf', level })).record;
}

/** Prepared and saved, nothing sent (attempts 0). */
export async function atSavePoint(t: Setup, level?: SessionRecord['request']['level']): Promise<SessionRecord> {
  const s = await started(t, level);
  const r = await t.engine.prepareCertificate(s, certificateDelivery(s, undefined, t), pdf);
  expect(isAtSavePoint(r.record)).toBe(true);
  return r.record;
}

export async function hashSubmitted(t: Setup, level?: SessionRecord['request']['level']): Promise<SessionRecord> {
  const s = await started(t, level);
  const r = await t.engine.applyDelivery(s, certificateDelivery(s, undefined, t), pdf);
  expect(sessionPhase(r.record)).toBe('hashSubmitted');
  return r.record;
}

export async function signed(t: Setup, level?: SessionRecord['request']['level']): Promise<SessionRecord> {
  const h = await hashSubmitted(t, level);
  const r = await t.engine.applyDelivery(h, signatureDelivery(h), pdf);
  expect(sessionPhase(r.record)).toBe('signed');
  return r.record;
}

/** The signatures (not document timestamps) in a PDF, checked by the verifier against the test root. */
export async function signaturesIn(signedPdf: Buffer, t: Setup) {
  const report = await verifyPdfSignatures(signedPdf, { trustedRoots: [pki.root.certDer], clock: t.clock.fn });
  return { report, signatures: report.signatures.filter((s) => s.type === 'signature') };
}

// ---------------------------------------------------------------------------------------------------------------

/** The test PKI and the sample PDF (once per test file). */
export async function loadFakes(): Promise<void> {
  pki = await createTestPki({ baseUrl: PKI_BASE, rsaUser: false }); // ~0.1-0.3 s on this machine
  ocsp = new OcspResponder(pki);
  tsa = new TimeStampAuthority(pki);
  pdf = await samplePdf('Engine transitions');
}

/** A store holding `record` and the session's PDF, as a front end left them. */
export function storedSession(record: SessionRecord): MemorySessionStore {
  const store = new MemorySessionStore();
  store.putDocument(record.state.signRef, pdf);
  expect(store.put(record, undefined)).toBe(true);
  return store;
}
