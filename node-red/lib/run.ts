/**
 * How every node in this package handles a message: one async step, its progress on the node status, and any failure
 * reported with `node.error(err, msg)` so a Catch node gets `msg.error.code` (the core's stable code, e.g.
 * `OCSP_REVOKED`) and, where the signing service refused a call, `msg.serviceCode` (its own, e.g. `INVALID_ASSERTION`).
 * Nothing escapes as an unhandled rejection and the runtime never crashes on bad input.
 */
import { SingpassFlowsError, isSingpassFlowsError } from '../../src/errors';
import type { Node, NodeMessage, NodeStatus } from './types';

export type Send = (msg: NodeMessage | (NodeMessage | null)[]) => void;

/** Register the node's input handler. `step` returns what to send (or nothing); it may throw. */
export function onInput(node: Node, step: (msg: NodeMessage, send: Send) => Promise<NodeMessage | (NodeMessage | null)[] | void>, busy: string): void {
  node.on('input', (msg, send, done) => {
    node.status({ fill: 'blue', shape: 'dot', text: busy });
    Promise.resolve()
      .then(() => step(msg, send))
      .then((out) => {
        if (out) send(out);
        done();
      })
      .catch((e: unknown) => {
        const err = asError(e);
        node.status({ fill: 'red', shape: 'ring', text: shortStatus(err) });
        // a Catch node gets the error's code only: the service's own code rides on the message handed to it
        if (typeof err.details.serviceCode === 'string') msg.serviceCode = err.details.serviceCode;
        done(err);
      })
      .catch(() => undefined); // done() itself never throws in Node-RED; belt and braces against an unhandled rejection
  });
}

/**
 * A thrown value as an Error carrying `code` (Node-RED copies `code` into the Catch node's `msg.error.code`) and the
 * log-safe `details` of the core's error.
 */
export function asError(e: unknown): SingpassFlowsError {
  if (isSingpassFlowsError(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new SingpassFlowsError('INVALID_INPUT', message, {}, { cause: e });
}

export function shortStatus(err: SingpassFlowsError): string {
  return `${err.code}: ${err.message}`.slice(0, 60);
}

export function setStatus(node: Node, status: NodeStatus): void {
  node.status(status);
}

/** `msg.payload` as PDF bytes, or a clear error naming what was there instead. */
export function pdfPayload(msg: NodeMessage, field = 'msg.payload'): Buffer {
  const p = msg.payload;
  if (Buffer.isBuffer(p)) return p;
  const what = p === undefined ? 'nothing' : typeof p === 'string' ? 'a string' : Array.isArray(p) ? 'an array' : typeof p;
  throw new SingpassFlowsError('INVALID_INPUT', `${field}: expected the PDF as a Buffer, got ${what}. Read the file with a "file in" node set to "a single Buffer object", or send the HTTP body as application/octet-stream`, { field });
}

/** A required text input: from the message property (when set) or the node's own setting. */
export function textInput(value: unknown, field: string, fallback?: string): string {
  const v = typeof value === 'string' && value.trim() !== '' ? value : fallback;
  if (typeof v !== 'string' || v.trim() === '') throw new SingpassFlowsError('INVALID_INPUT', `${field}: is required`, { field });
  return v;
}
