/**
 * The engine's narration (every step callback a front end logs or shows) names the signer without personal data: a
 * whole session against the sandbox, then every payload searched for the user's certificate (base64, as the webhook
 * carried it) and the NRIC in its subject. The certificate step gives the name, the chain check the issuers.
 */
import { fixture } from '../fixtures/pdfs';
import { startSessionHarness, until, type SessionHarness } from './harness';

let h: SessionHarness;
beforeAll(async () => { h = await startSessionHarness(); });
afterAll(async () => { await h?.close(); });

/** The NRIC/FIN in a sandbox user's subject (its serialNumber attribute). */
const nricOf = (subject: string) => /serialNumber=([A-Z]\d{7}[A-Z])/.exec(subject)![1];

/** Everything one session's steps said, as text (Buffers as base64, the way a log would show them). */
const narrationOf = (signRef: string) => JSON.stringify(h.steps.filter((x) => x.signRef === signRef).map((x) => x.step),
  (_k, v: unknown) => (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' ? Buffer.from((v as { data: number[] }).data).toString('base64') : v));

test('a signed session: the steps name the signer and the issuers, never the certificate or the NRIC', async () => {
  const user = h.sandbox.pki.users.p256;
  const s = await h.runner.start(await fixture('classic'), { documentName: 'Narrated.pdf', level: 'B-T' });
  await h.sandbox.phone.scan(s.signRef, { user: 'p256' });
  await until(() => h.hashes.has(s.signRef), 'the hash');
  await h.sandbox.phone.approve(s.signRef);
  const out = await h.runner.outcome(s.signRef);
  expect(out.record.state.status).toBe('completed');

  const steps = h.steps.filter((x) => x.signRef === s.signRef).map((x) => x.step);
  expect(steps.find((x) => x.step === 'certificate')).toEqual({ step: 'certificate', signRef: s.signRef, signer: { name: 'TAN AH KOW' }, publicKeyAlgorithm: 'EC P-256' });
  expect(steps.find((x) => x.step === 'certificateChecked')).toEqual({
    step: 'certificateChecked', ocsp: 'good',
    issuers: [expect.stringContaining('CN=Singpass Flows Sandbox Signing CA'), expect.stringContaining('CN=Singpass Flows Sandbox Root CA')],
  });
  const said = narrationOf(s.signRef);
  expect(said).not.toContain(user.certDer.toString('base64'));
  expect(said).not.toContain(user.certDer.toString('base64').slice(40, 120)); // nor a piece of it
  expect(said).not.toContain(nricOf(user.subject));
  expect(said).not.toContain('TAN AH KOW,'); // not the subject as one line either
}, 60_000);

test('a revoked certificate: the steps up to the session\'s end carry no certificate or NRIC either', async () => {
  const user = h.sandbox.pki.users.revoked;
  const s = await h.runner.start(await fixture('classic'), { documentName: 'Revoked.pdf', level: 'B-B' });
  h.sandbox.sign.faults.skipUserCertificateChecks(true); // a service that does not check: the DSAP must
  await h.sandbox.phone.scan(s.signRef, { user: 'revoked' });
  const out = await h.runner.outcome(s.signRef);
  h.sandbox.sign.faults.skipUserCertificateChecks(false);
  expect(out.record.error?.code).toBe('OCSP_REVOKED');
  const steps = h.steps.filter((x) => x.signRef === s.signRef).map((x) => x.step);
  expect(steps.map((x) => x.step)).toEqual(expect.arrayContaining(['certificate', 'ended']));
  const said = narrationOf(s.signRef);
  expect(said).toContain('REVOKED TEST USER');
  expect(said).not.toContain(user.certDer.toString('base64').slice(40, 120));
  expect(said).not.toContain(nricOf(user.subject));
}, 60_000);
