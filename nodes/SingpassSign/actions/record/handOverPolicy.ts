import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { invalidInput } from '../../../../src/errors';
import { SESSION_POLICY, sessionPolicy, type SessionPolicy } from '../../../../src/session';

/** How long the flow has to store and acknowledge a hand-over before the PDF is handed over again. */
export const handOverLeaseInput: INodeProperties = {
  displayName: 'Hand Over Again After (Seconds)',
  name: 'handOverLeaseSeconds',
  type: 'number',
  typeOptions: { minValue: 1 },
  // n8n wants a literal here; test/session/policy.test.ts holds it to SESSION_POLICY.handOverLeaseMs
  default: 300,
  description: 'A signed PDF handed to the workflow\'s storage and not acknowledged (Acknowledge Stored PDF) within this time is handed over again by the resume schedule (the same bytes and file name, so the storage overwrites). Longer than your storage takes for a large PDF.',
};

/** How long an unacknowledged signed PDF is handed over again before the session ends undelivered. */
export const handOverWindowInput: INodeProperties = {
  displayName: 'Give Up Handing Over After (Seconds)',
  name: 'handOverWindowSeconds',
  type: 'number',
  typeOptions: { minValue: 1 },
  // SESSION_POLICY.handOverWindowMs: a day
  default: 86400,
  description: 'Counted from the end of signing: after this, a signed PDF the storage never acknowledged is no longer handed over and the session ends "undelivered" (the reason in its record); the PDF stays in the session store until the retention ends',
};

/** The node's hand-over settings (those it has; unset ones the session policy's). */
export function handOverPolicyOf(ctx: IExecuteFunctions, i: number): Pick<SessionPolicy, 'handOverLeaseMs' | 'handOverWindowMs'> {
  const seconds = (input: INodeProperties, fallbackMs: number): number => {
    const s = Number(ctx.getNodeParameter(input.name, i, fallbackMs / 1000));
    if (!Number.isFinite(s) || s <= 0) throw invalidInput(input.displayName, 'must be a number of seconds > 0');
    return s * 1000;
  };
  return sessionPolicy({
    handOverLeaseMs: seconds(handOverLeaseInput, SESSION_POLICY.handOverLeaseMs),
    handOverWindowMs: seconds(handOverWindowInput, SESSION_POLICY.handOverWindowMs),
  });
}
