/**
 * The glue between a signing node and the core's driver (which loads a stored session, runs the step its record calls
 * for and saves it with compare-and-set): what goes out on a message, and the engine's progress worded as node
 * status. Every protocol rule (token binding, OCSP before the hash, state machine, levels, hand-over) is the core's.
 */
import { SingpassFlowsError, type ErrorCode } from '../../src/errors';
import type { DueStepResult, HandOverItem, SessionRecord, SessionStep } from '../../src/session';
import type { SignClientNode } from './sign-client';
import type { Node, NodeMessage, NodeStatus } from './types';

/** What a step is doing, for the node status (the ops team watching the flow sees where each session is). */
export function stepStatus(step: SessionStep): NodeStatus {
  const text = ((): string => {
    switch (step.step) {
      case 'created': return `session ${short(step.signRef)} waiting for scan`;
      case 'certificate': return 'certificate received';
      case 'certificateChecked': return 'certificate status: good';
      case 'prepared': return 'PDF prepared';
      case 'submitted': return `hash submitted, waiting for approval (${step.challengeCode})`;
      case 'submitDeferred': return `service unavailable (${step.code}), will retry`;
      case 'signature': return 'signature received';
      case 'finishDeferred': return `${step.stage === 'embed' ? 'timestamp' : step.stage === 'validationData' ? 'validation data' : 'document timestamp'} unavailable (${step.code}), will retry`;
      case 'embedded': return step.timestamped ? 'signature embedded + timestamp' : 'signature embedded';
      case 'validationData': return 'validation data added';
      case 'documentTimestamp': return 'document timestamp added';
      case 'verified': return `verified: ${step.report.level ?? 'not valid'}`;
      case 'delivered': return 'signed PDF stored';
      case 'handOverFailed': return `storing the signed PDF failed (${step.code}), will retry`;
      case 'undelivered': return `signed PDF never stored (${step.code})`;
      case 'ended':
        // completed short of the level asked for (finishing failed for good after the user signed): the PDF went on
        if (step.missing) return `session ${step.status} short of ${step.missing.requested} (${step.missing.code})`;
        return `session ${step.status}${step.error ? `: ${step.error.code}` : ''}`;
    }
  })();
  const fill = step.step === 'ended' && step.missing ? 'yellow' : step.step === 'ended' && step.status !== 'signed' ? 'red' : step.step === 'submitDeferred' || step.step === 'finishDeferred' || step.step === 'handOverFailed' ? 'yellow' : step.step === 'undelivered' ? 'red' : step.step === 'verified' || step.step === 'ended' ? 'green' : 'blue';
  return { fill, shape: 'dot', text };
}

export function short(signRef: string): string {
  return signRef.length > 12 ? `${signRef.slice(0, 8)}…` : signRef;
}

/**
 * The record as it travels on `msg.session`: everything but the webhook Bearer secret and the user's certificate
 * (personal data: a message may be logged, debugged or stored by the flow; the store keeps both, the certificate
 * until the session ends).
 */
export function recordForMessage(record: SessionRecord): SessionRecord {
  const state = { ...record.state, clientNotificationToken: '(kept in the session store)' };
  delete state.certificate;
  const out: SessionRecord = { ...record, state };
  if (record.prepared) {
    const prepared: Partial<NonNullable<SessionRecord['prepared']>> = { ...record.prepared };
    delete prepared.certificate;
    out.prepared = prepared as SessionRecord['prepared'];
  }
  return out;
}

/** `msg.signRef`, checked. */
export function signRefInput(signRef: unknown): string {
  if (typeof signRef !== 'string' || signRef === '') {
    throw new SingpassFlowsError('INVALID_INPUT', 'msg.signRef: expected the sign_ref of a session (the webhook node and the start node set it)', { field: 'msg.signRef' });
  }
  return signRef;
}

/** No such session in the store. */
export function notFound(signRef: string): SingpassFlowsError {
  return new SingpassFlowsError('SIGN_REF_NOT_FOUND', `No signing session ${signRef} in the session store (started elsewhere, or already cleaned up)`, { retryable: false });
}

export async function loadSession(client: SignClientNode, signRefIn: unknown): Promise<{ signRef: string; record: SessionRecord; pdf: Buffer | undefined }> {
  const signRef = signRefInput(signRefIn);
  const record = await client.store.get(signRef);
  if (!record) throw notFound(signRef);
  return { signRef, record, pdf: await client.store.getDocument(signRef) };
}

/** A session that ended with an error, as an Error a Catch node can route by `msg.error.code`. */
export function sessionError(record: SessionRecord): SingpassFlowsError | undefined {
  if (!record.error) return undefined;
  const { serviceCode } = record.error;
  return new SingpassFlowsError(record.error.code as ErrorCode, record.error.message, { signRef: record.state.signRef, ...(serviceCode ? { serviceCode } : {}) });
}

/**
 * Node status per step. Given the session, the text starts with its short sign_ref, so concurrent sessions are told
 * apart in the editor and a Status node can follow one session (the demo's signing page does).
 */
export function statusReporter(node: Node, signRef?: string): (step: SessionStep) => void {
  return (step) => {
    const status = stepStatus(step);
    node.status(signRef && step.step !== 'created' ? { ...status, text: `${short(signRef)} ${status.text}` } : status);
  };
}


/**
 * Sessions being finished in this process right now. Node-RED runs the flows in one process, so this is exact: the
 * sweep never starts a second finish beside the finish node's however slow the TSA is (the second would only lose
 * the compare-and-set after the same TSA and OCSP calls).
 */
const finishing = new Set<string>();

/**
 * Run `finish` (a finishing step through the core's driver) unless this process is finishing the session already
 * (then undefined: nothing run). The finish node and the webhook node's sweep both go through here.
 */
export async function exclusiveFinish<T>(signRef: string, finish: () => Promise<T>): Promise<T | undefined> {
  if (finishing.has(signRef)) return undefined;
  finishing.add(signRef);
  try {
    return await finish();
  } finally {
    finishing.delete(signRef);
  }
}

/**
 * What the flow gets from a finishing or hand-over step: the signed PDF to store (`msg`, the core's hand-over: the
 * same bytes and file name every time), or the session's failure for good (`error`, with `msg` for a Catch node);
 * nothing while finishing waits for a retry. (The core's `step` removed what signing needed once it ended.)
 */
export function handOverOutcome(result: DueStepResult): { msg?: NodeMessage; error?: SingpassFlowsError } {
  const { record } = result;
  if (!record || result.lost || result.documentMissing) return {};
  const { signRef } = record.state;
  if (result.handOver) return { msg: handOverMessage(result.handOver, record, result.report) };
  const error = sessionError(record);
  if (!error) return {};
  return { error, msg: { signRef, session: recordForMessage(record), payload: { type: record.state.status, signRef }, ...(result.report ? { verification: result.report } : {}) } };
}

/** The "finished" message: the signed PDF and the name to store it under, the attempt, the session (no personal data). */
function handOverMessage(item: HandOverItem, record: SessionRecord, report: DueStepResult['report']): NodeMessage {
  return {
    signRef: item.signRef, session: recordForMessage(record), payload: item.pdf, filename: item.fileName,
    handOver: { attempt: item.attempt }, ...(report ? { verification: report } : {}),
  };
}
