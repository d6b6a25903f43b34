/**
 * Finishing a signed session on Node-RED. The finish node (right after the signature) finishes here: it saves with
 * compare-and-set and ends the session (PDF and deliveries deleted) only when it completed or failed for good; a
 * deferred finish keeps the signed record (with `lastFinishFailure`) and its PDF for the next try, which the signing
 * webhook node's sweep makes through the core's driver, sending the same message. Both go through
 * {@link exclusiveFinish}, so one process never finishes a session twice at once. The engine always finishes from the
 * PDF as it was before signing, so a retry never adds a second signature.
 */import type { SingpassFlowsError } from '../../src/errors';
import type { SessionRecord, SessionStep, SigningEngine } from '../../src/session';
import { endSession, recordForMessage, sessionError } from './session-steps';
import type { SignClientNode } from './sign-client';
import type { NodeMessage } from './types';

/**
 * Sessions being finished in this process right now. Node-RED runs the flows in one process, so this is exact: the
 * sweep never starts a second finish beside a live one however slow the TSA is (it would only waste the work: the
 * second save loses the compare-and-set).
 */
const finishing = new Set<string>();

export type FinishOutcome =
  /** Already being finished in this process: nothing done. */
  | { kind: 'busy' }
  /** Another step changed the record meanwhile (compare-and-set lost): nothing kept, nothing to send. */
  | { kind: 'lost' }
  /** A finishing stage failed temporarily: the record (still signed, with `lastFinishFailure`) is saved. */
  | { kind: 'deferred'; record: SessionRecord }
  /** Completed, or failed for good (`error`): the session ended; `msg` is what the flow gets. */
  | { kind: 'ended'; record: SessionRecord; msg: NodeMessage; error?: SingpassFlowsError };

/** Finish `record` (signed) with its PDF `pdf` and save the outcome; see {@link FinishOutcome}. */
export async function finishSigned(client: SignClientNode, engine: SigningEngine, record: SessionRecord, pdf: Buffer, onStep: (step: SessionStep) => void): Promise<FinishOutcome> {
  const { signRef } = record.state;
  const outcome = await exclusiveFinish(signRef, async (): Promise<FinishOutcome> => {
    const result = await engine.finish(record, pdf, { onStep });
    // the signed PDF first, as the core's driver does: a record that says completed always has its PDF in the store
    if (result.pdf && result.record.state.status === 'completed') await client.store.putSignedDocument(signRef, result.pdf);
    if (!(await client.store.put(result.record, record.revision))) return { kind: 'lost' };
    if (result.deferred) return { kind: 'deferred', record: result.record };
    await endSession(client, signRef);
    const msg: NodeMessage = {
      signRef, session: recordForMessage(result.record), verification: result.report,
      payload: result.pdf ?? pdf, filename: `${signRef}.pdf`,
    };
    return { kind: 'ended', record: result.record, msg, error: sessionError(result.record) };
  });
  return outcome ?? { kind: 'busy' };
}

/**
 * Run `finish` unless the session is already being finished in this process (then undefined: nothing run). The finish
 * node and the webhook node's sweep (through the core's driver) both go through here.
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
