import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import { sessionPhase, step, type SessionRecord } from '../../../../src/session';
import { sessionRecordStore, storeInputs } from '../../../shared/record-store';
import { forOperation } from '../../../shared/router';

export const signRefOfStoredPdf: INodeProperties = {
  displayName: 'Sign Ref',
  name: 'signRef',
  type: 'string',
  default: '={{ $json.signRef }}',
  required: true,
  description: 'The session whose signed PDF Run Due Step handed over: the "signRef" of its item. After a storage node that outputs an item of its own (the FTP node), take it from Run Due Step\'s item instead.',
};

export const description: INodeProperties[] = forOperation('sessionRecord', 'acknowledgeStoredPdf', [...storeInputs, signRefOfStoredPdf]);

/**
 * After the workflow's storage node wrote the signed PDF Run Due Step handed over: the session ends `completed`
 * (the core's entry point, `acknowledge`, compare-and-set), so it is not handed over again. Harmless twice; a session with no
 * signed PDF (still signing, failed) is refused.
 */
export async function execute(this: IExecuteFunctions, i: number): Promise<INodeExecutionData> {
  const signRef = signRefOf(this, i);
  const store = await sessionRecordStore(this, i);
  const r = await step(store, signRef, { on: 'acknowledge' });
  return { json: { signRef, acknowledged: r.moved, ...handOverStanding(r.record) } };
}

export function signRefOf(ctx: IExecuteFunctions, i: number): string {
  const signRef = String(ctx.getNodeParameter('signRef', i, '') ?? '').trim();
  if (!signRef) throw invalidInput('Sign Ref', 'is empty; pass the "signRef" of Run Due Step\'s hand-over item');
  return signRef;
}

/** Where the session's hand-over stands, without personal data: no record, no document name. */
export function handOverStanding(record: SessionRecord | undefined): IDataObject {
  if (!record) return { found: false };
  const h = record.handOver;
  return {
    found: true, status: record.state.status, phase: sessionPhase(record),
    ...(h ? { attempts: h.attempts, ...(h.lastFailure ? { lastFailure: { ...h.lastFailure } } : {}), ...(h.undelivered ? { undelivered: { ...h.undelivered } } : {}), ...(sessionPhase(record) === 'handingOver' ? { nextHandOverAt: new Date(h.nextAt).toISOString() } : {}) } : {}),
  };
}
