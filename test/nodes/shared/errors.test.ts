import { NodeApiError, NodeOperationError } from 'n8n-workflow';
import { SingpassFlowsError } from '../../../src/errors';
import { errorItem, toNodeError } from '../../../nodes/shared/errors';
import { runEachItem } from '../../../nodes/shared/items';
import { executeContext, testNode } from '../context';

describe('toNodeError', () => {
  it('maps a service answer to NodeApiError keeping the core message, code and service ids', () => {
    const e = new SingpassFlowsError('SIGN_AUTH_REJECTED', 'The signing service refused our credentials', { status: 401, serviceErrorId: 'e-1', traceId: 't-9' });
    const n = toNodeError(testNode, e, 3);
    expect(n).toBeInstanceOf(NodeApiError);
    expect(n.message).toBe('The signing service refused our credentials');
    expect(n.context.code).toBe('SIGN_AUTH_REJECTED');
    expect(n.description).toContain('Error code: SIGN_AUTH_REJECTED');
    expect(n.description).toContain('service error id: e-1');
    expect(n.description).toContain('trace id: t-9');
    expect((n as NodeApiError).httpCode).toBe('401');
  });

  it('maps an input or state error to NodeOperationError naming the field', () => {
    const n = toNodeError(testNode, new SingpassFlowsError('KEY_INVALID', 'Credential "X", field "Signing Key": bad', { field: 'Signing Key' }));
    expect(n).toBeInstanceOf(NodeOperationError);
    expect(n.context).toMatchObject({ code: 'KEY_INVALID', field: 'Signing Key' });
  });

  it('wraps a foreign error without losing its message', () => {
    const n = toNodeError(testNode, new TypeError('boom'));
    expect(n).toBeInstanceOf(NodeOperationError);
    expect(n.message).toBe('boom');
  });

  it('errorItem keeps the code, the log-safe details and the pairing', () => {
    const item = errorItem(testNode, new SingpassFlowsError('OCSP_REVOKED', 'revoked', { retryable: false }), 2);
    expect(item).toEqual({ json: { error: 'revoked', code: 'OCSP_REVOKED', details: { retryable: false } }, pairedItem: { item: 2 } });
  });

  it('puts the service\'s own code beside ours: in the failed item and in the stopped execution\'s error', () => {
    const e = new SingpassFlowsError('SIGN_REQUEST_REJECTED', 'rejected', { status: 400, serviceCode: 'INVALID_REQUEST', retryable: false });
    expect(errorItem(testNode, e, 0).json).toEqual({ error: 'rejected', code: 'SIGN_REQUEST_REJECTED', serviceCode: 'INVALID_REQUEST', details: { status: 400, serviceCode: 'INVALID_REQUEST', retryable: false } });
    const n = toNodeError(testNode, e);
    expect(n.context).toMatchObject({ code: 'SIGN_REQUEST_REJECTED', serviceCode: 'INVALID_REQUEST' });
    expect(n.description).toContain('service code: INVALID_REQUEST');
  });
});

describe('runEachItem', () => {
  const items = [{ json: { n: 0 } }, { json: { n: 1 } }, { json: { n: 2 } }];

  it('pairs every output with its input, also for several outputs per input', async () => {
    const ctx = executeContext({ params: {}, items });
    const out = await runEachItem(ctx, async (i) => (i === 1 ? [{ json: { a: 1 } }, { json: { a: 2 } }] : { json: { i } }));
    expect(out.map((o) => o.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 1 }, { item: 2 }]);
  });

  it('throws the mapped error naming the item when Continue On Fail is off', async () => {
    const ctx = executeContext({ params: {}, items });
    const run = runEachItem(ctx, async (i) => {
      if (i === 1) throw new SingpassFlowsError('STATE_INVALID', 'wrong state');
      return { json: {} };
    });
    await expect(run).rejects.toBeInstanceOf(NodeOperationError);
    await expect(run).rejects.toMatchObject({ message: 'wrong state', context: { code: 'STATE_INVALID', itemIndex: 1 } });
  });

  it('with Continue On Fail, outputs an error item in place of the failed one and goes on', async () => {
    const ctx = executeContext({ params: {}, items, continueOnFail: true });
    const out = await runEachItem(ctx, async (i) => {
      if (i === 1) throw new SingpassFlowsError('STATE_INVALID', 'wrong state');
      return { json: { ok: i } };
    });
    expect(out).toEqual([
      { json: { ok: 0 }, pairedItem: { item: 0 } },
      { json: { error: 'wrong state', code: 'STATE_INVALID', details: {} }, pairedItem: { item: 1 } },
      { json: { ok: 2 }, pairedItem: { item: 2 } },
    ]);
  });
});
