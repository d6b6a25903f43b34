import { mockDeep } from 'jest-mock-extended';
import type { IWebhookFunctions } from 'n8n-workflow';
import { SingpassSign } from '../../../nodes/SingpassSign/SingpassSign.node';
import { SingpassSignTrigger } from '../../../nodes/SingpassSignTrigger/SingpassSignTrigger.node';
import { fixture } from '../../fixtures/pdfs';
import { executeContext, pdfItem, testNode } from '../context';
import { startSignSandbox, type SignSandbox } from '../sign-harness';

/**
 * The Singpass Sign Trigger as the signing service sees it (over real HTTP, from the sandbox) and on its own with a
 * broken credential: every delivery gets the answer the spec requires, and only genuine first-time events start the
 * workflow, on the output for their type.
 */
describe('Singpass Sign Trigger', () => {
  let env: SignSandbox;
  beforeAll(async () => {
    env = await startSignSandbox();
  }, 120_000);
  afterAll(() => env?.close());

  const create = async () => {
    const ctx = executeContext({ params: { resource: 'session', operation: 'createSession', binaryPropertyName: 'data', documentName: 'T.pdf', level: 'B-B', options: {} }, items: [pdfItem(await fixture('classic'))], credentials: env.credentials });
    const [[created]] = await new SingpassSign().execute.call(ctx);
    return created.json.signRef as string;
  };

  it('a delivery sent twice (same token, after it was acknowledged) starts the workflow once; both get 200', async () => {
    env.sb.sign.faults.deliverTwice(true);
    try {
      const signRef = await create();
      const firedBefore = env.fired.length;
      await env.sb.phone.scan(signRef, { user: 'p256' });
      const cert = await env.next(0);
      expect(cert.json).toMatchObject({ type: 'certificate', signRef, delivery: { event: { type: 'certificate', signRef } } });
      // wait until the sandbox has sent the copy and had its answer
      const deadline = Date.now() + 20_000;
      const copies = () => env.sb.sign.deliveries().filter((d) => d.signRef === signRef && d.requestType === 'user_cert');
      while (copies().filter((d) => d.status !== undefined).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(copies().map((d) => ({ duplicate: d.duplicate, status: d.status }))).toEqual([{ duplicate: false, status: 200 }, { duplicate: true, status: 200 }]);
      expect(env.fired.length - firedBefore).toBe(1);
    } finally {
      env.sb.sign.faults.deliverTwice(false);
    }
  });

  it('an error event (the user rejected) leaves on the Error output only, with its code', async () => {
    const signRef = await create();
    await env.sb.phone.reject(signRef);
    const err = await env.next(2);
    expect(err.json).toMatchObject({ type: 'error', signRef, error: { code: expect.any(String) } });
    const run = env.fired.find((outputs) => outputs[2].some((i) => i.json.signRef === signRef))!;
    expect([run[0].length, run[1].length, run[2].length]).toEqual([0, 0, 1]);
  });

  it('a Bearer this DSAP never issued is answered 400 and does not start the workflow', async () => {
    const before = env.fired.length;
    const res = await fetch(env.sb.sign.clients()[0].notificationUrl, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sfn1_0123456789abcdef0123456789abcdef_forged' }, body: JSON.stringify({ token: 'x.y.z' }),
    });
    expect(res.status).toBe(400);
    expect(env.fired.length).toBe(before);
  });

  it('a broken credential is our fault: 503 (the service retries), logged, no crash and no workflow', async () => {
    const ctx = mockDeep<IWebhookFunctions>();
    ctx.getNode.mockReturnValue(testNode);
    ctx.getRequestObject.mockReturnValue({ headers: { authorization: 'Bearer x' }, rawBody: Buffer.from('{}') } as never);
    ctx.getCredentials.mockImplementation(async (name: string) => (name === 'singpassSignApi' ? { ...env.credentials.singpassSignApi, signingKey: '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----' } : env.credentials[name]));
    const answer: { status?: number; body?: unknown } = {};
    const response = { status: (s: number) => ((answer.status = s), response), json: (b: unknown) => ((answer.body = b), response), end: () => response };
    ctx.getResponseObject.mockReturnValue(response as never);
    const out = await new SingpassSignTrigger().webhook.call(ctx);
    expect(answer).toMatchObject({ status: 503, body: { error_code: 'internal_error' } });
    expect(out).toEqual({ noWebhookResponse: true });
    expect(ctx.logger.error).toHaveBeenCalledWith(expect.stringMatching(/cannot check deliveries/));
    expect(JSON.stringify(answer.body)).not.toMatch(/not a key|PRIVATE/);
  });
});
