import * as crypto from 'node:crypto';
import type * as http from 'node:http';
import { listen, readBody, sendJson, type RunningServer } from '../../../sandbox/http';
import { startSandbox, type Sandbox } from '../../../sandbox';
import { generateClientKeys, loadSigningKey } from '../../../src/keys';
import { SigningApiClient, createWebhookVerifier, type SigningEvent } from '../../../src/sign';

/**
 * Interop: our client (src/sign, written independently from the same spec) against the sandbox service, over real
 * HTTP. Each side has its own wire table; this is where a disagreement between them shows up.
 */
describe('src/sign client ↔ sandbox signing service', () => {
  let sb: Sandbox;
  let dsap: RunningServer;
  let client: SigningApiClient;
  const events: SigningEvent[] = [];
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    // Retry delay > 1 s on purpose: the client's key set refuses to refetch within 1 s of a load, so after a rotation
    // right after a load the first attempt can fail and the service's retry (2 s in production) must get through.
    sb = await startSandbox({ webhookRetryDelayMs: 1200, webhookTimeoutMs: 8000 });
    const keys = await generateClientKeys();
    const signingKey = await loadSigningKey({ key: keys.signing });
    const verifier = createWebhookVerifier({ keySetUrl: sb.urls.signKeys });
    dsap = await listen(async (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
      if (url.pathname === '/jwks') return sendJson(res, 200, keys.publicKeySet);
      const result = await verifier.handle({ headers: req.headers, body: await readBody(req), expectedToken: (ref) => tokens.get(ref) });
      if (result.event && !result.duplicate) events.push(result.event);
      if ('body' in result.response) return sendJson(res, result.response.status, result.response.body);
      res.writeHead(result.response.status, { 'content-length': '0' }).end();
    });
    sb.sign.registerClient({ clientId: 'interop-dsap', jwksUrl: `${dsap.baseUrl}/jwks`, notificationUrl: `${dsap.baseUrl}/hook` });
    client = new SigningApiClient({ baseUrl: sb.urls.signApi, clientId: 'interop-dsap', signingKey });
  });
  afterAll(async () => {
    await sb?.close();
    await dsap?.close();
  });

  const waitEvent = async (ref: string, type: SigningEvent['type']): Promise<SigningEvent> => {
    for (let i = 0; i < 100; i++) {
      const e = events.find((x) => x.signRef === ref && x.type === type);
      if (e) return e;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no ${type} event for ${ref}`);
  };

  /** A new session whose notification token the webhook receiver knows. */
  const openSession = async () => {
    const token = crypto.randomBytes(16).toString('hex');
    const session = await client.createSession({ clientNotificationToken: token, tenantId: 'interop' });
    tokens.set(session.signRef, token);
    return session;
  };

  it.each(['p256', 'p384'])('%s: create → certificate event → hash → signature event that verifies over the signed data', async (user) => {
    const session = await openSession();
    expect(session.qrPayload).toContain(encodeURIComponent(session.signRef));
    expect(await sb.phone.scan(session.signRef, { user })).toBe('acknowledged');
    const cert = await waitEvent(session.signRef, 'certificate');
    if (cert.type !== 'certificate') throw new Error('unreachable');
    expect(cert.certificate.der.equals(sb.pki.users[user as 'p256' | 'p384'].certDer)).toBe(true);

    const data = crypto.randomBytes(150);
    await client.submitDocumentHash(session.signRef, {
      documentName: 'contract.pdf',
      documentHash: crypto.createHash('sha256').update(data).digest('hex'),
      challengeCode: '0042',
      nonce: cert.nonce,
      domainName: 'localhost',
    });
    expect(await sb.phone.approve(session.signRef)).toBe('acknowledged');
    const sig = await waitEvent(session.signRef, 'signature');
    if (sig.type !== 'signature') throw new Error('unreachable');
    expect(crypto.verify('sha256', data, { key: new crypto.X509Certificate(cert.certificate.der).publicKey, dsaEncoding: 'der' }, Buffer.from(sig.signature, 'hex'))).toBe(true);
  });

  it('service key rotation between the two notifications: the signature event still verifies (refetch on new kid)', async () => {
    const session = await openSession();
    await sb.phone.scan(session.signRef);
    const cert = await waitEvent(session.signRef, 'certificate');
    if (cert.type !== 'certificate') throw new Error('unreachable');
    const newKid = sb.sign.rotateKeys();
    sb.sign.retireOldKeys();
    await client.submitDocumentHash(session.signRef, { documentName: 'a.pdf', documentHash: 'b'.repeat(64), challengeCode: '1234', nonce: cert.nonce, domainName: 'x' });
    expect(await sb.phone.approve(session.signRef)).toBe('acknowledged');
    await waitEvent(session.signRef, 'signature');
    const delivered = sb.sign.deliveries().filter((d) => d.signRef === session.signRef && d.requestType === 'signed_doc_hash');
    expect(delivered.at(-1)?.outcome).toBe('acknowledged');
    expect(sb.sign.currentKid()).toBe(newKid);
  });

  it('the client retries the hash call once after a 503 from the service', async () => {
    const session = await openSession();
    await sb.phone.scan(session.signRef);
    const cert = await waitEvent(session.signRef, 'certificate');
    if (cert.type !== 'certificate') throw new Error('unreachable');
    sb.sign.faults.serviceError(1, 503);
    await client.submitDocumentHash(session.signRef, { documentName: 'a.pdf', documentHash: 'c'.repeat(64), challengeCode: '1234', nonce: cert.nonce, domainName: 'x' });
    expect(sb.sign.session(session.signRef)?.state).toBe('hash_submitted');
  });

  it('an expired session surfaces as SIGN_REF_NOT_FOUND in the client', async () => {
    const session = await openSession();
    sb.sign.faults.expireSession(session.signRef);
    await expect(
      client.submitDocumentHash(session.signRef, { documentName: 'a', documentHash: 'a'.repeat(64), challengeCode: '1234', nonce: 'n', domainName: 'x' }),
    ).rejects.toMatchObject({ code: 'SIGN_REF_NOT_FOUND' });
  });

  it('a user rejection arrives as an error event', async () => {
    const session = await openSession();
    await sb.phone.scan(session.signRef);
    await sb.phone.reject(session.signRef);
    const e = await waitEvent(session.signRef, 'error');
    expect(e).toMatchObject({ type: 'error', errorCode: 'user_cancelled', correlationId: expect.any(String) });
  });
});
