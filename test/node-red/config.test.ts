/**
 * Config nodes and bad input: a wrong key type, a malformed PEM or JWK, a public key where the private one belongs,
 * a payload that is not a Buffer, a session that does not exist. Each gives a clear error with the core's code (what
 * a Catch node routes on), none crashes the runtime or leaves an unhandled rejection.
 */
import { caught, catchNode, configNodes, sessionDirs, getNode, helper, keys, nextError, nextMessage, positioned, rootPem, signNodes } from './helper';

const sessionDir = sessionDirs();

const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);
beforeAll(() => process.on('unhandledRejection', onUnhandled));
afterAll(() => process.off('unhandledRejection', onUnhandled));
afterEach(async () => {
  await helper.unload();
  expect(unhandled).toEqual([]);
});

const SECRET = 'x'.repeat(40);
const ROOT_PEM = rootPem();

function flow(start: Record<string, unknown> = {}) {
  return positioned([
    { id: 'secretNode', type: 'singpass-notification-secret', name: 'webhook secret' },
    {
      id: 'client', type: 'singpass-sign-client', environment: 'custom', baseUrl: 'http://127.0.0.1:9/sign/api/v1',
      keySetUrl: 'http://127.0.0.1:9/keys.json', clientId: 'dsap', domainName: 'sign.example.sg', tenantId: 'acme', notificationSecret: 'secretNode', trustedRoots: ROOT_PEM, sessionDir: sessionDir(),
    },
    { id: 'f1', type: 'tab' },
    { id: 'start', z: 'f1', type: 'singpass-sign-start', client: 'client', level: 'B-LTA', wires: [['out']], ...start },
    { id: 'apply', z: 'f1', type: 'singpass-sign-apply', client: 'client', wires: [['out']] },
    { id: 'verify', z: 'f1', type: 'singpass-pdf-verify', client: 'client', wires: [['out']] },
    { id: 'finish', z: 'f1', type: 'singpass-sign-finish', client: 'client', wires: [['out']] },
    { id: 'stored', z: 'f1', type: 'singpass-sign-stored', client: 'client', outcome: 'auto', wires: [['out']] },
    { id: 'prepare', z: 'f1', type: 'singpass-sign-prepare', client: 'client', wires: [['out']] },
    { id: 'submit', z: 'f1', type: 'singpass-sign-submit', client: 'client', wires: [['out']] },
    { id: 'certStatus', z: 'f1', type: 'singpass-cert-status', client: 'client', wires: [['out']] },
    { id: 'ltv', z: 'f1', type: 'singpass-pdf-validation-data', client: 'client', wires: [['out']] },
    { id: 'docTs', z: 'f1', type: 'singpass-pdf-timestamp', client: 'client', wires: [['out']] },
    { id: 'catch', z: 'f1', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'out', z: 'f1', type: 'helper' },
    { id: 'caught', z: 'f1', type: 'helper' },
  ]);
}

async function load(signingKey: string, start?: Record<string, unknown>) {
  await helper.load([configNodes, signNodes, catchNode], flow(start), { client: { signingKey }, secretNode: { secret: SECRET } });
}

describe('Singpass Sign API client config node', () => {
  test('an RSA key is refused on deploy and when a node uses it, with KEY_UNSUPPORTED', async () => {
    await load(keys().rsaPem);
    const deployError = (await nextError(getNode('client'))) as { code: string; message: string };
    expect(deployError.code).toBe('KEY_UNSUPPORTED');
    // Node-RED's own wording (the config node and its field as the editor labels them), never an n8n credential's
    expect(deployError.message).toMatch(/^Singpass Sign API client "client", field "Signing key": Only EC keys/);
    expect(deployError.message).not.toMatch(/Credential|DSAP Signing Key/);
    const m = await caught('start', { payload: Buffer.from('%PDF-1.7') });
    expect(m.error.code).toBe('KEY_UNSUPPORTED');
    expect(m.error.source.id).toBe('start');
  });

  test('start signing: an app link (setting or msg.appLink) that is not https is INVALID_INPUT before any call', async () => {
    await load(keys().jwk, { appLink: 'myapp://signed' });
    const m = await caught('start', { payload: Buffer.from('%PDF-1.7') });
    expect(m.error.code).toBe('INVALID_INPUT');
    expect(m.error.message).toMatch(/appLink: must use https:\/\/$/);
    const over = await caught('start', { payload: Buffer.from('%PDF-1.7'), appLink: 'http://app.example.sg/signed' });
    expect(over.error.code).toBe('INVALID_INPUT');
    expect(over.error.message).toMatch(/appLink: must use https:\/\/$/);
  });

  test('a malformed PEM is KEY_INVALID naming the field', async () => {
    await load('-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----');
    const m = await caught('start', { payload: Buffer.from('%PDF-1.7') });
    expect(m.error.code).toBe('KEY_INVALID');
    expect(m.error.message).toMatch(/field "Signing key"/);
  });

  test('a JWK that is not JSON, and a public JWK, are KEY_INVALID', async () => {
    await load('{"kty":"EC",');
    expect(((await caught('start', { payload: Buffer.from('%PDF') })).error.message)).toMatch(/not valid JSON/);
    await helper.unload();
    const pub = JSON.parse(keys().jwk);
    delete pub.d;
    await load(JSON.stringify(pub));
    const m = await caught('start', { payload: Buffer.from('%PDF') });
    expect(m.error.code).toBe('KEY_INVALID');
    expect(m.error.message).toMatch(/PRIVATE key/);
  });

  test('a public PEM is refused: the credential needs the private key', async () => {
    await load(keys().publicPem);
    const m = await caught('start', { payload: Buffer.from('%PDF') });
    expect(m.error.code).toBe('KEY_INVALID');
    expect(m.error.message).toMatch(/public key or certificate/);
  });

  test('a notification secret shorter than 32 characters is named', async () => {
    await helper.load([configNodes, signNodes, catchNode], flow(), { client: { signingKey: keys().jwk }, secretNode: { secret: 'short' } });
    // (the key is fine: the engine is built and refuses the secret)
    const m = await caught('verify', { payload: Buffer.from('%PDF') });
    expect(m.error.code).toBe('INVALID_INPUT');
    expect(m.error.message).toMatch(/notificationSecret: must be at least 32 characters/);
  });
});

describe('signing nodes refuse bad input', () => {
  test('start signing: a string payload is not a PDF Buffer', async () => {
    await load(keys().jwk);
    const m = await caught('start', { payload: '%PDF-1.7 as text' });
    expect(m.error.code).toBe('INVALID_INPUT');
    expect(m.error.message).toMatch(/msg.payload: expected the PDF as a Buffer, got a string/);
    expect(getNode('start').status.args.at(-1)![0]).toMatchObject({ fill: 'red' });
  });

  test('start signing: an unknown level is named', async () => {
    await load(keys().jwk, { level: 'B-XL' });
    const m = await caught('start', { payload: Buffer.from('%PDF-1.7') });
    expect(m.error.message).toMatch(/level: "B-XL"/);
  });

  test('apply event: a message that did not come from the webhook node, and an unknown session', async () => {
    await load(keys().jwk);
    expect((await caught('apply', { payload: 1 })).error.message).toMatch(/msg.event.type: connect this node to a signing webhook/);
    const m = await caught('apply', { signRef: 'nope', event: { type: 'certificate' } });
    expect(m.error.code).toBe('SIGN_REF_NOT_FOUND');
  });

  test('prepare signature: only the certificate event, of a known session with a received delivery', async () => {
    await load(keys().jwk);
    expect((await caught('prepare', { signRef: 's1', event: { type: 'signature' } })).error.message).toMatch(/takes the signing webhook node's certificate output/);
    expect((await caught('prepare', { payload: 1 })).error.code).toBe('INVALID_INPUT');
    expect((await caught('prepare', { signRef: 'nope', event: { type: 'certificate' } })).error.code).toBe('SIGN_REF_NOT_FOUND');
    const client = helper.getNode('client') as unknown as { store: { put(r: unknown, rev: undefined): Promise<boolean> } };
    await client.store.put({
      format: 'singpass-flows/signing-session@1', revision: 1, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 1, sha256: '' },
      state: { signRef: 's2', status: 'waiting_for_scan' },
    }, undefined);
    const m = await caught('prepare', { signRef: 's2', event: { type: 'certificate' } });
    expect(m.error).toMatchObject({ code: 'STATE_INVALID', message: expect.stringMatching(/No certificate delivery was received for session s2/) });
  });

  test('submit hash: an unknown session, and one prepare signature did not save (no hash can leave unchecked)', async () => {
    await load(keys().jwk);
    expect((await caught('submit', { signRef: 'nope' })).error.code).toBe('SIGN_REF_NOT_FOUND');
    const client = helper.getNode('client') as unknown as { store: { put(r: unknown, rev: undefined): Promise<boolean> } };
    for (const status of ['waiting_for_scan', 'hash_submitted']) {
      const signRef = `s-${status}`;
      await client.store.put({
        format: 'singpass-flows/signing-session@1', revision: 1, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 1, sha256: '' },
        state: { signRef, status },
      }, undefined);
      const m = await caught('submit', { signRef });
      expect(m.error).toMatchObject({ code: 'STATE_INVALID', message: expect.stringMatching(new RegExp(`takes a session prepare signature saved.*is ${status}`)) });
    }
  });

  test('finish signing: an unknown session, and a session that is not signed yet (wrong state)', async () => {
    await load(keys().jwk);
    expect((await caught('finish', { signRef: 'nope' })).error.code).toBe('SIGN_REF_NOT_FOUND');
    const pdf = Buffer.from('%PDF-1.7\n%%EOF\n');
    const client = helper.getNode('client') as unknown as { store: { put(r: unknown, rev: undefined): Promise<boolean>; putDocument(ref: string, b: Buffer): Promise<void> } };
    await client.store.putDocument('s1', pdf);
    await client.store.put({
      format: 'singpass-flows/signing-session@1', revision: 1, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: pdf.length, sha256: '' },
      state: { signRef: 's1', status: 'hash_submitted' },
    }, undefined);
    const m = await caught('finish', { signRef: 's1' });
    expect(m.error.code).toBe('STATE_INVALID');
    expect(m.error.message).toMatch(/Nothing to finish: the session is hash_submitted/);
  });

  test('signed PDF stored: acknowledges a hand-over (completed), or reports its storage failed (msg.error: handed over again later)', async () => {
    await load(keys().jwk);
    expect((await caught('stored', { signRef: 'nope' })).error.code).toBe('SIGN_REF_NOT_FOUND');
    const client = helper.getNode('client') as unknown as { handOverPolicy: unknown; store: { put(r: unknown, rev: undefined): Promise<boolean>; get(ref: string): Promise<any> } };
    expect(client.handOverPolicy).toEqual({ handOverLeaseMs: 300_000, handOverWindowMs: 86_400_000 }); // the session policy's
    const at = Math.floor(Date.now() / 1000);
    const handingOver = (signRef: string) => ({
      format: 'singpass-flows/signing-session@1', revision: 1, phase: 'handingOver', request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 1, sha256: '' },
      state: { signRef, status: 'completed', updatedAt: at }, result: { level: 'B-B', valid: true }, handOver: { since: at * 1000, attempts: 1, lastAt: at * 1000, nextAt: at * 1000 + 300_000 },
    });
    await client.store.put(handingOver('h1'), undefined);
    await client.store.put(handingOver('h2'), undefined);
    const out = nextMessage(getNode('out'));
    getNode('stored').receive({ signRef: 'h1', payload: Buffer.from('%PDF') });
    expect((await out).session).toMatchObject({ phase: 'completed', handOver: { attempts: 1, acknowledgedAt: expect.any(Number) } });
    expect((await client.store.get('h1')).phase).toBe('completed');

    const failed = nextMessage(getNode('out'));
    getNode('stored').receive({ signRef: 'h2', error: { message: 'EACCES: permission denied', source: { id: 'write' } } });
    expect((await failed).session).toMatchObject({ phase: 'handingOver', handOver: { lastFailure: { code: 'HANDOVER_FAILED', message: 'EACCES: permission denied' } } });
    const stored = await client.store.get('h2');
    expect(stored.handOver.nextAt).toBeLessThan(Date.now() + 300_000); // a short backoff, not the whole lease

    // a session with no signed PDF to hand over is refused
    await client.store.put({ format: 'singpass-flows/signing-session@1', revision: 1, request: { documentName: 'a.pdf', level: 'B-B' }, document: { length: 1, sha256: '' }, state: { signRef: 'w1', status: 'hash_submitted' } }, undefined);
    expect((await caught('stored', { signRef: 'w1' })).error).toMatchObject({ code: 'STATE_INVALID', message: expect.stringMatching(/no signed PDF to acknowledge/) });
  });

  test('the client\'s hand-over lease and window (seconds) become the policy the nodes pass on; a wrong value is named on deploy', async () => {
    const withHandOver = (lease: string, window: string) => flow().map((n) => (n.id === 'client' ? { ...n, handOverLeaseSeconds: lease, handOverWindowSeconds: window } : n));
    await helper.load([configNodes, signNodes, catchNode], withHandOver('4', '40'), { client: { signingKey: keys().jwk }, secretNode: { secret: SECRET } });
    expect((helper.getNode('client') as unknown as { handOverPolicy: unknown }).handOverPolicy).toEqual({ handOverLeaseMs: 4000, handOverWindowMs: 40_000 });
    await helper.unload();
    await helper.load([configNodes, signNodes, catchNode], withHandOver('0', ''), { client: { signingKey: keys().jwk }, secretNode: { secret: SECRET } });
    expect(await nextError(getNode('client'))).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/^Hand-over lease: "0" is not a number of seconds/) });
  });

  test('a client without trusted roots (not the sandbox) names the setting to fill in', async () => {
    const noRoots = flow().map((n) => (n.id === 'client' ? { ...n, trustedRoots: '' } : n));
    await helper.load([configNodes, signNodes, catchNode], noRoots, { client: { signingKey: keys().jwk }, secretNode: { secret: SECRET } });
    const m = await caught('start', { payload: Buffer.from('%PDF-1.7') });
    expect(m.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/Trusted roots: paste the root CA certificate/) });
  });

  test('PDF tools: no Buffer, and a certificate that is not one', async () => {
    await load(keys().jwk);
    for (const id of ['ltv', 'docTs', 'verify']) {
      const m = await caught(id, { payload: { not: 'a pdf' } });
      expect(m.error.code).toBe('INVALID_INPUT');
      expect(m.error.message).toMatch(/expected the PDF as a Buffer, got object/);
    }
    const c = await caught('certStatus', { payload: 42 });
    expect(c.error.message).toMatch(/msg.payload: expected a certificate/);
  });

  test('a node without its config node says which one to choose', async () => {
    await helper.load([configNodes, signNodes, catchNode], positioned([
      { id: 'f1', type: 'tab' },
      { id: 'start', z: 'f1', type: 'singpass-sign-start', client: '', wires: [[]] },
      { id: 'catch', z: 'f1', type: 'catch', scope: null, uncaught: false, wires: [['caught']] },
      { id: 'caught', z: 'f1', type: 'helper' },
    ]));
    const m = await caught('start', { payload: Buffer.from('%PDF') });
    expect(m.error.message).toMatch(/choose a "Singpass Sign API client" config node/);
  });
});
