/**
 * The session runner over real HTTP against the sandbox (signing service, phone, CA with OCSP and TSA): forged and
 * refused deliveries never end a session, it waits until its own deadline, a key rotation inside the refetch cooldown
 * survives the service's retry, duplicates never submit a second hash, and the user's certificate is checked before
 * any hash at every level.
 */
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import { fixture } from '../fixtures/pdfs';
import { run, samplePdf } from '../pades/ltv-helpers';
import { pdfsigSections, selfSignedSigner, signWithPdfsig } from '../pades/foreign-signer';
import { makeNssDb } from '../helpers/pki-tools';
import { signDigest } from '../../sandbox/phone';
import { finalizeSignature, prepareSignature } from '../../src/pades';
import type { PadesLevel } from '../../src/pades/verify';
import { createSessionRunner, type SessionRecord } from '../../src/session';
import { post, startSessionHarness, until, type SessionHarness } from './harness';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const attackerKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
/** A webhook JWT as a forger would make it: right claims, wrong key. */
function forgedJwt(signRef: string, kid = 'attacker'): Promise<string> {
  return new SignJWT({ sign_ref: signRef, request_type: 'user_cert', user_cert: 'AAAA', nonce: 'n' })
    .setProtectedHeader({ alg: 'ES256', kid }).setIssuedAt().setExpirationTime('2m').sign(attackerKey);
}

/** Claims of the JWT in a raw webhook body (read only to pick deliveries; never trusted). */
function claimsOf(body: Buffer): Record<string, unknown> {
  const token = (JSON.parse(body.toString()) as { token: string }).token;
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
}

/** The record a session ended with must keep neither the user's certificate nor the prepared signature. */
function expectNoPersonalData(h: SessionHarness, record: SessionRecord): void {
  expect(record.state.certificate).toBeUndefined();
  expect(record.prepared).toBeUndefined();
  const stored = h.store.get(record.state.signRef)!;
  expect(stored.state.certificate).toBeUndefined();
  expect(stored.prepared).toBeUndefined();
  expect(JSON.stringify(stored)).not.toMatch(/MII[A-Za-z0-9+/]{200}/); // no base64 DER certificate anywhere in the record (a random token may hold "MII")
  expect(h.store.getDocument(record.state.signRef)).toBeUndefined();
}

let pdf: Buffer;
let dir: string;
beforeAll(async () => {
  pdf = await samplePdf('Session engine test');
  dir = mkdtempSync(join(tmpdir(), 'session-runner-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('forged and refused deliveries', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness(); });
  afterAll(() => h.close());

  it('are answered 400 and ignored before and after the scan; the genuine session completes', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Forgery test.pdf', level: 'B-T' });
    const other = await h.runner.start(pdf, { documentName: 'Other.pdf', level: 'B-B' });
    const otherToken = h.store.get(other.signRef)!.state.clientNotificationToken;
    const forgeries = async () => [
      await post(h.webhookUrl, JSON.stringify({ token: await forgedJwt(s.signRef) })), // no Bearer at all
      await post(h.webhookUrl, JSON.stringify({ token: await forgedJwt(s.signRef) }), { authorization: `Bearer ${otherToken}` }), // another session's token
      await post(h.webhookUrl, JSON.stringify({ token: await forgedJwt(s.signRef) }), { authorization: `Bearer ${h.tokens.issue()}` }), // ours, but bound to no session
      await post(h.webhookUrl, 'garbage{', { authorization: `Bearer ${otherToken}` }),
      await post(h.webhookUrl, JSON.stringify({ token: 'a.b.c' })),
    ];
    for (const r of await forgeries()) expect(r.status).toBe(400);
    expect(h.store.get(s.signRef)!.state.status).toBe('waiting_for_scan');

    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    await until(() => h.store.get(s.signRef)!.state.status === 'hash_submitted', 'the hash');
    for (const r of await forgeries()) expect(r.status).toBe(400);
    expect(h.store.get(s.signRef)!.state.status).toBe('hash_submitted');

    await h.sandbox.phone.approve(s.signRef);
    const out = await h.runner.outcome(s.signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.state.status).toBe('completed');
    expect(out.record.result).toEqual({ level: 'B-T', valid: true });
    expect(h.refused.filter((r) => r.status === 400).length).toBeGreaterThanOrEqual(10);
    expectNoPersonalData(h, out.record);
    const file = join(dir, 'forgery.pdf');
    writeFileSync(file, out.pdf!);
    expect((await run('qpdf', ['--check', file])).stdout).toContain('No syntax or stream encoding errors found');
    expect(h.hashes.get(s.signRef)).toBe(1);
  });
});

describe('expiry at the session\'s own deadline', () => {
  let h: SessionHarness;
  // The service says 4 s (expires_at); after a scan the engine waits 3 s more.
  beforeAll(async () => { h = await startSessionHarness({ sandbox: { sessionTtlSeconds: 4 }, engine: { scanExtensionSeconds: 3 } }); });
  afterAll(() => h.close());

  it('an unscanned session waits through forgeries until expires_at, then ends SESSION_EXPIRED', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Expiry.pdf', level: 'B-B' });
    for (let i = 0; i < 3; i++) {
      expect((await post(h.webhookUrl, JSON.stringify({ token: await forgedJwt(s.signRef) }))).status).toBe(400);
    }
    const out = await h.runner.outcome(s.signRef);
    expect(Date.now()).toBeGreaterThanOrEqual(s.expiresAt * 1000);
    expect(out.record.state.status).toBe('expired');
    expect(out.record.error?.code).toBe('SESSION_EXPIRED');
    expect(out.pdf).toBeUndefined();
    expectNoPersonalData(h, out.record);
  });

  it('a scanned session never approved expires after the scan extension and drops the certificate and prepared state', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Never approved.pdf', level: 'B-B' });
    await h.sandbox.phone.scan(s.signRef, { user: 'p384' });
    await until(() => h.store.get(s.signRef)!.state.status === 'hash_submitted', 'the hash');
    const mid = h.store.get(s.signRef)!;
    expect(mid.state.certificate).toBeDefined(); // kept while the session is active…
    expect(mid.prepared).toBeDefined();
    const out = await h.runner.outcome(s.signRef);
    expect(out.record.state.status).toBe('expired');
    expect(out.record.error?.code).toBe('SESSION_EXPIRED');
    expect(Date.now()).toBeGreaterThanOrEqual(h.engine.deadline(mid));
    expectNoPersonalData(h, out.record); // …and gone once it ended
  });
});

describe('service key rotation inside the key-set refetch cooldown', () => {
  let h: SessionHarness;
  // As the real service: 3 attempts, 2 s apart. A 3 s cooldown makes the first attempt certainly land inside it.
  beforeAll(async () => { h = await startSessionHarness({ sandbox: { webhookRetryDelayMs: 2000 }, engine: { keySetRefetchCooldownSeconds: 3 } }); });
  afterAll(() => h.close());

  it('is answered 503 and the session survives the service\'s retry', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Rotation.pdf', level: 'B-B' });
    // A token with an unknown kid presented with the session's own Bearer spends the on-demand refetch…
    const bearer = h.store.get(s.signRef)!.state.clientNotificationToken;
    expect((await post(h.webhookUrl, JSON.stringify({ token: await forgedJwt(s.signRef, 'made-up') }), { authorization: `Bearer ${bearer}` })).status).toBe(503);
    // …then the service rotates and the user scans: the new kid cannot be fetched yet.
    h.sandbox.sign.rotateKeys();
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    await until(() => h.store.get(s.signRef)!.state.status === 'hash_submitted', 'the hash after the retry');
    await h.sandbox.phone.approve(s.signRef);
    const out = await h.runner.outcome(s.signRef);
    expect(out.record.state.status).toBe('completed');
    const certAttempts = h.sandbox.sign.deliveries().filter((d) => d.signRef === s.signRef && d.requestType === 'user_cert');
    expect(certAttempts[0]!.status).toBe(503);
    expect(certAttempts[certAttempts.length - 1]!.status).toBe(200);
    expect(h.hashes.get(s.signRef)).toBe(1);
  });
});

describe('duplicate deliveries', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness({ sandbox: { autoPhone: true } }); });
  afterAll(() => h.close());

  it('every notification delivered twice, and the certificate replayed concurrently: one hash, one completed session', async () => {
    h.sandbox.sign.faults.deliverTwice(true);
    const s = await h.runner.start(pdf, { documentName: 'Twice.pdf', level: 'B-B' });
    const out = await h.runner.outcome(s.signRef);
    expect(out.record.state.status).toBe('completed');
    const copies = () => h.sandbox.sign.deliveries().filter((d) => d.signRef === s.signRef && d.duplicate);
    await until(() => copies().length === 2, 'the second copies of both notifications');
    expect(copies().every((d) => d.status === 200)).toBe(true);
    // Replay the genuine certificate delivery five times at once (e.g. a proxy retrying).
    const cert = h.raw.find((r) => { const c = claimsOf(r.body); return c.sign_ref === s.signRef && c.request_type === 'user_cert'; })!;
    const replies = await Promise.all(Array.from({ length: 5 }, () => post(h.webhookUrl, cert.body, { authorization: String(cert.headers.authorization) })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(h.hashes.get(s.signRef)).toBe(1);
    expect(h.store.get(s.signRef)!.state.status).toBe('completed');
  });
});

describe('the user\'s certificate is checked before any hash, at every level', () => {
  let h: SessionHarness;
  beforeAll(async () => {
    h = await startSessionHarness({ sandbox: { webhookRetryDelayMs: 50 } });
    h.sandbox.sign.faults.skipUserCertificateChecks(true); // a service that does not check: the DSAP must
  });
  afterAll(() => h.close());

  const cases: [string, string][] = [['revoked', 'OCSP_REVOKED'], ['expired', 'CERTIFICATE_EXPIRED'], ['notyetvalid', 'CERTIFICATE_NOT_YET_VALID'], ['untrusted', 'CERTIFICATE_UNTRUSTED']];
  const levels: PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
  it.each(cases)('%s user → %s, no hash submitted, at B-B, B-T, B-LT and B-LTA', async (user, code) => {
    const sessions = await Promise.all(levels.map((level) => h.runner.start(pdf, { documentName: `${user}-${level}.pdf`, level })));
    await Promise.all(sessions.map((s) => h.sandbox.phone.scan(s.signRef, { user })));
    for (const s of sessions) {
      const out = await h.runner.outcome(s.signRef);
      expect(out.record.state.status).toBe('failed');
      expect(out.record.error?.code).toBe(code);
      expect(out.pdf).toBeUndefined();
      expect(h.hashes.get(s.signRef)).toBeUndefined();
      expect(h.sandbox.sign.session(s.signRef)?.state).toBe('cert_sent'); // the service never got a hash
      expectNoPersonalData(h, out.record);
    }
  });

  it('a certificate from a CA this DSAP does not trust (sandbox checks on, other trust anchor) → CERTIFICATE_UNTRUSTED', async () => {
    h.sandbox.sign.faults.skipUserCertificateChecks(false);
    const otherRoot = (await h.sandbox.pki.issueUserCertificate({ curve: 'P-256', commonName: 'SOME OTHER ROOT', selfSigned: true })).certDer;
    const engine = h.newEngine({ trustedRoots: [otherRoot] });
    const s = await engine.start(pdf, { documentName: 'Other anchor.pdf', level: 'B-B' });
    // Not in the runner's store: the runner refuses the delivery (unknown sign_ref); this engine applies it.
    const before = h.raw.length;
    await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
    await until(() => h.raw.length > before, 'the certificate delivery');
    const check = await engine.checkDelivery({ headers: h.raw[before]!.headers, body: h.raw[before]!.body });
    const r = await engine.applyDelivery(s.record, check.delivery!, pdf);
    expect(r.record.error?.code).toBe('CERTIFICATE_UNTRUSTED');
    expect(h.hashes.get(s.signRef)).toBeUndefined();
  });
});

describe('before the session is created', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness(); });
  afterAll(() => h.close());

  it.each([['encrypted', 'PDF_ENCRYPTED'], ['certifiedNoChanges', 'PDF_CERTIFIED_NO_CHANGES']] as const)('a %s PDF → %s and no session exists', async (name, code) => {
    const created = h.sandbox.sign.sessions().length;
    await expect(h.runner.start(await fixture(name), { documentName: 'x.pdf' })).rejects.toMatchObject({ code });
    expect(h.sandbox.sign.sessions().length).toBe(created);
  });

  it('garbage bytes → PDF_INVALID; a level above B-B without a TSA → INVALID_INPUT naming tsaUrl; no session exists', async () => {
    const created = h.sandbox.sign.sessions().length;
    await expect(h.runner.start(Buffer.from('not a pdf'), { documentName: 'x.pdf' })).rejects.toMatchObject({ code: 'PDF_INVALID' });
    await expect(h.newEngine({ tsaUrl: undefined }).start(pdf, { documentName: 'x.pdf', level: 'B-T' })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field: 'tsaUrl' } });
    expect(h.sandbox.sign.sessions().length).toBe(created);
  });

  it('a domain name the hash call would refuse (a URL) or a bad tenant id stops the configuration, not the session after the scan', () => {
    for (const [overrides, field] of [[{ domainName: 'https://sign.example.sg/page' }, 'domainName'], [{ domainName: 'x'.repeat(256) }, 'domainName'], [{ tenantId: 'ACME\u0000' }, 'tenantId'], [{ tenantId: 'x'.repeat(256) }, 'tenantId']] as const) {
      expect(() => h.newEngine(overrides)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field }) }));
    }
  });

  it('a reason or location the PDF signature would refuse (over 500 characters) is refused at start; no session exists', async () => {
    const created = h.sandbox.sign.sessions().length;
    for (const field of ['reason', 'location'] as const) {
      await expect(h.runner.start(pdf, { documentName: 'x.pdf', [field]: 'x'.repeat(501) })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { field } });
    }
    expect(h.sandbox.sign.sessions().length).toBe(created);
  });
});

describe('certificate events worked on a limited number at a time', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness({ runner: { certificateConcurrency: 1 } }); });
  afterAll(() => h.close());

  it('a limit below 1 is refused, naming the option', () => {
    for (const bad of [0, -1, Number.NaN]) {
      expect(() => createSessionRunner({ engine: h.engine, certificateConcurrency: bad })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', details: expect.objectContaining({ field: 'certificateConcurrency' }) }));
    }
  });

  it('with a limit of 1, simultaneous scans are worked on one after another, in arrival order, and all complete', async () => {
    const sessions = await Promise.all([1, 2, 3].map((i) => h.runner.start(pdf, { documentName: `Limited ${i}.pdf`, level: 'B-B' })));
    await Promise.all(sessions.map((s) => h.sandbox.phone.scan(s.signRef, { user: 'p256' })));
    await until(() => sessions.every((s) => h.store.get(s.signRef)!.state.status === 'hash_submitted'), 'three hashes');
    const trail = h.steps.filter((x) => x.step.step === 'certificate' || x.step.step === 'submitted').map((x) => `${x.step.step}:${x.signRef}`);
    // Never a second certificate started before the previous one's hash was submitted.
    const order = trail.filter((t) => t.startsWith('certificate:')).map((t) => t.slice('certificate:'.length));
    expect(trail).toEqual(order.flatMap((r) => [`certificate:${r}`, `submitted:${r}`]));
    expect(new Set(order)).toEqual(new Set(sessions.map((s) => s.signRef)));
    await Promise.all(sessions.map((s) => h.sandbox.phone.approve(s.signRef)));
    for (const s of sessions) {
      expect((await h.runner.outcome(s.signRef)).record.result).toEqual({ level: 'B-B', valid: true });
      expect(h.hashes.get(s.signRef)).toBe(1);
    }
  });
});

describe('the answer to the hash call is lost', () => {
  let h: SessionHarness;
  let lost = 0;
  beforeAll(async () => {
    // The first hash POST reaches the service (which accepts it), then its answer is lost as a timeout would lose it.
    const clientFetch = async (url: string, init?: RequestInit): Promise<Response> => {
      const res = await fetch(url, init);
      if (url.endsWith('/hash') && lost++ === 0) throw Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
      return res;
    };
    h = await startSessionHarness({ sandbox: { autoPhone: true }, clientFetch });
  });
  afterAll(() => h.close());

  it('the retry is refused ("already submitted"), the session keeps waiting and completes with the one hash', async () => {
    const s = await h.runner.start(pdf, { documentName: 'Lost answer.pdf', level: 'B-B' });
    const out = await h.runner.outcome(s.signRef);
    expect(lost).toBe(2); // the lost answer and the refused retry
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-B', valid: true });
    expect(h.hashes.get(s.signRef)).toBe(1);
    expectNoPersonalData(h, out.record);
  });
});

describe('a PDF already signed by someone else', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness({ sandbox: { autoPhone: true } }); });
  afterAll(() => h.close());

  it('the result is judged on OUR signature (the newest), not on the other, untrusted one; B-LT does not fail on its chain', async () => {
    // Signed first (by our own code) with a self-signed key this DSAP does not trust: its chain can never be completed.
    const stranger = await h.sandbox.pki.issueUserCertificate({ curve: 'P-256', commonName: 'SOMEONE ELSE', selfSigned: true });
    const { documentHash, state } = await prepareSignature(pdf, { certificate: stranger.certDer, reason: 'First signature' });
    const signedByOther = await finalizeSignature(pdf, state, signDigest(Buffer.from(documentHash, 'hex'), stranger.privateKey));
    for (const level of ['B-T', 'B-LT'] as const) {
      const s = await h.runner.start(signedByOther, { documentName: 'Countersign.pdf', level });
      const out = await h.runner.outcome(s.signRef);
      expect(out.record.error).toBeUndefined();
      expect(out.record.result).toEqual({ level, valid: true });
      const sigs = out.report!.signatures.filter((x) => x.type === 'signature');
      expect(sigs).toHaveLength(2);
      expect(sigs[0]!).toMatchObject({ valid: false, chain: { trusted: false } }); // the other one
      expect(sigs[1]!).toMatchObject({ valid: true, chain: { trusted: true }, level }); // ours, the newest
      expect(out.report!.newest).toMatchObject({ index: 1, valid: true, level });
      expect(out.report!.valid).toBe(false); // the whole-file verdict would have refused it
      expect(out.validationData?.perSignature.map((x) => [x.required, x.complete])).toEqual(level === 'B-T' ? undefined : [[false, false], [true, true]]);
      expectNoPersonalData(h, out.record);
    }
  });

  it('signed first by another tool (pdfsig, self-signed): B-LTA completes, says what the other signature lacks, and pdfsig/qpdf agree', async () => {
    const signer = await selfSignedSigner(dir);
    const foreign = await signWithPdfsig(pdf, signer, dir, { fieldName: 'Foreign' });
    const s = await h.runner.start(foreign, { documentName: 'Signed elsewhere.pdf', level: 'B-LTA' });
    const out = await h.runner.outcome(s.signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-LTA', valid: true });
    expect(out.report!.newest).toMatchObject({ index: 1, valid: true, level: 'B-LTA', documentTimestamps: [2] });
    // What could not be obtained for the other signature is said, and never failed the session; ours is complete.
    expect(out.validationData!.perSignature).toEqual([
      { fieldName: 'Foreign', type: 'signature', required: false, complete: false, missing: [expect.objectContaining({ code: 'CHAIN_UNTRUSTED' })] },
      expect.objectContaining({ type: 'signature', required: true, complete: true, missing: [] }),
      expect.objectContaining({ type: 'docTimestamp', required: true, complete: true, missing: [] }),
    ]);
    // Independent tools: every byte pdfsig wrote is kept, qpdf finds no error, pdfsig finds both signatures intact
    // and ours trusted (NSS database holding the sandbox root; OCSP answered by the sandbox responder).
    expect(out.pdf!.subarray(0, foreign.length).equals(foreign)).toBe(true);
    const file = join(dir, 'signed-elsewhere-lta.pdf');
    writeFileSync(file, out.pdf!);
    expect((await run('qpdf', ['--check', file])).stdout).toContain('No syntax or stream encoding errors found');
    const nss = await makeNssDb(join(dir, 'nss'), h.sandbox.pki.root.certPem);
    const report = await run('pdfsig', ['-nssdir', `sql:${nss}`, file]).then((r) => r.stdout, (e: { stdout?: string }) => e.stdout ?? '');
    const sections = pdfsigSections(report);
    expect(sections).toHaveLength(3);
    expect(sections[0]).toContain('Signature Field Name: Foreign');
    expect(sections[0]).toContain('Signature Validation: Signature is Valid.');
    expect(sections[0]).not.toContain('Certificate is Trusted.');
    expect(sections[1]).toContain('Signature Validation: Signature is Valid.');
    expect(sections[1]).toContain('Certificate Validation: Certificate is Trusted.');
    expectNoPersonalData(h, out.record);
  });
});

describe('every signature form the app may send', () => {
  let h: SessionHarness;
  beforeAll(async () => { h = await startSessionHarness({ sandbox: { rsaUser: true } }); });
  afterAll(() => h.close());

  // The spec says DER; raw 64-byte r||s is accepted too and converted; RSA signers get PKCS#1 v1.5 (not DER).
  it.each([['p256', 'raw', 'raw r||s'], ['p384', 'raw', 'raw r||s'], ['rsa', 'der', 'PKCS#1 v1.5']] as const)('%s user, %s signature (%s): the webhook takes it and the session completes with a signature pdfsig finds valid', async (user, encoding, _form) => {
    const s = await h.runner.start(pdf, { documentName: `Form ${user} ${encoding}.pdf`, level: 'B-T' });
    await h.sandbox.phone.scan(s.signRef, { user });
    await until(() => h.store.get(s.signRef)!.state.status === 'hash_submitted', 'the hash');
    expect(await h.sandbox.phone.approve(s.signRef, { encoding })).toBe('acknowledged');
    const out = await h.runner.outcome(s.signRef);
    expect(out.record.error).toBeUndefined();
    expect(out.record.result).toEqual({ level: 'B-T', valid: true });
    const file = join(dir, `form-${user}-${encoding}.pdf`);
    writeFileSync(file, out.pdf!);
    const nss = await makeNssDb(join(dir, `nss-${user}`), h.sandbox.pki.root.certPem);
    const report = await run('pdfsig', ['-nssdir', `sql:${nss}`, file]).then((r) => r.stdout, (e: { stdout?: string }) => e.stdout ?? '');
    expect(report).toContain('Signature Validation: Signature is Valid.');
    expect(report).toContain('Certificate Validation: Certificate is Trusted.');
  });
});
