import { NodeApiError, NodeOperationError, type INode, type INodeExecutionData, type JsonObject } from 'n8n-workflow';
import { SingpassFlowsError, isSingpassFlowsError } from '../../src/errors';

/**
 * Core errors whose cause is a remote service's answer: shown as NodeApiError (n8n then labels them as the service's
 * fault, with the HTTP status). Everything else is the workflow's input or our own check: NodeOperationError.
 */
function isServiceAnswer(e: SingpassFlowsError): boolean {
  return typeof e.details.status === 'number';
}

/**
 * The n8n error for any failure of a core call. The core's stable code leads the description (and is kept in
 * `context.code`) so users can search for it and branch on it; the message is the core's, written for low-code users.
 */
export function toNodeError(node: INode, e: unknown, itemIndex?: number): NodeOperationError | NodeApiError {
  if (e instanceof NodeOperationError || e instanceof NodeApiError) return e;
  const err = isSingpassFlowsError(e)
    ? e
    : new SingpassFlowsError('INVALID_INPUT', (e as Error)?.message ?? String(e), {}, { cause: e });
  const description = describe(err);
  let out: NodeOperationError | NodeApiError;
  if (isServiceAnswer(err)) {
    out = new NodeApiError(node, err.toJSON() as unknown as JsonObject, {
      message: err.message, description, httpCode: String(err.details.status), itemIndex,
    });
    // NodeApiError may replace the message with a generic one for the status; the core's message is more useful.
    out.message = err.message;
  } else {
    out = new NodeOperationError(node, err.message, { description, itemIndex });
    // n8n swaps a message that mentions a common errno (ECONNREFUSED…) for a generic one; ours names the setting to fix
    out.message = err.message;
  }
  out.context.code = err.code;
  if (typeof err.details.serviceCode === 'string') out.context.serviceCode = err.details.serviceCode;
  if (err.details.field) out.context.field = err.details.field;
  return out;
}

function describe(err: SingpassFlowsError): string {
  const d = err.details;
  const parts = [`Error code: ${err.code}`];
  if (d.serviceCode) parts.push(`service code: ${d.serviceCode}`);
  if (d.serviceErrorId) parts.push(`service error id: ${d.serviceErrorId}`);
  if (d.traceId) parts.push(`trace id: ${d.traceId}`);
  if (d.retryable === true) parts.push('retrying later can succeed');
  return parts.join(' · ');
}

/** The output item for a failed input item when "Continue On Fail" is on: the code and a log-safe message. */
export function errorItem(node: INode, e: unknown, itemIndex: number): INodeExecutionData {
  const err = toNodeError(node, e, itemIndex);
  const code = (err.context.code as string | undefined) ?? 'UNKNOWN';
  const details = isSingpassFlowsError(e) ? e.details : {};
  // the service's own code (e.g. INVALID_REQUEST) beside ours, where a workflow branches or a support request quotes it
  const serviceCode = typeof details.serviceCode === 'string' ? { serviceCode: details.serviceCode } : {};
  return { json: { error: err.message, code, ...serviceCode, details: details }, pairedItem: { item: itemIndex } };
}
