/**
 * Shared by the malformed-input tables: every row must end in a SingpassFlowsError with the expected stable code
 * (and, for validation errors, the field named), never another exception type, never an unhandled rejection, and a
 * message a user can read (no stack trace, no internals).
 */
import * as crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SingpassFlowsError, type ErrorCode } from '../../src/errors';

export interface Expected {
  code: ErrorCode;
  /** For validation errors: the field or setting the message must name (also in details.field). */
  field?: string;
}

/**
 * Rejections nobody handled, collected by a listener on the real process while a table runs; each suite asserts
 * there were none. Needs `@jest-environment ./test/malformed/environment.ts` in the file's docblock (a test file's own
 * `process` is a copy that never receives them): without it the suite fails instead of silently listening to nothing.
 */
export function trapUnhandledRejections(): { readonly seen: unknown[] } {
  const state = { seen: [] as unknown[] };
  let stop: (() => void) | undefined;
  beforeAll(() => {
    const listen = (globalThis as { __hostProcessOnUnhandledRejection?: (l: (reason: unknown) => void) => () => void }).__hostProcessOnUnhandledRejection;
    if (!listen) throw new Error('trapUnhandledRejections needs the docblock `@jest-environment ./test/malformed/environment.ts`');
    stop = listen((reason) => state.seen.push(reason));
  });
  afterAll(async () => {
    await new Promise((r) => setTimeout(r, 50)); // let late rejections (a timer after the last row) surface before the check
    stop?.();
    expect(state.seen.map(String)).toEqual([]);
  });
  return state;
}

/** The message is for a user: no stack frames, no internal paths, not empty. */
export function expectReadableMessage(message: string): void {
  expect(message).toMatch(/\S/);
  expect(message).not.toMatch(/\n\s+at |node:internal|node_modules|\.ts:\d+|\.js:\d+/);
  expect(message).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/); // no terminal escapes or NULs from hostile input
}

/** Runs `fn` (sync or async) and checks it fails with a SingpassFlowsError of the expected code and field. */
export async function expectTypedError(fn: () => unknown, expected: Expected): Promise<SingpassFlowsError> {
  let thrown: unknown;
  try {
    await fn();
  } catch (e) {
    thrown = e;
  }
  if (thrown === undefined) throw new Error(`expected ${expected.code}, but it succeeded`);
  if (!(thrown instanceof SingpassFlowsError)) throw new Error(`expected a SingpassFlowsError ${expected.code}, got ${String((thrown as Error)?.stack ?? thrown)}`);
  expect({ code: thrown.code, field: thrown.details.field }).toEqual({ code: expected.code, field: expected.field ?? thrown.details.field });
  if (expected.field) expect(thrown.message).toContain(expected.field);
  expectReadableMessage(thrown.message);
  return thrown;
}

/** A key-set server standing in for the signing service's static site (127.0.0.1, ephemeral port). */
export async function keySetServer(keys: object[]): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/keys.json`,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** Runs openssl with args in a temp dir and returns the named output file (certificates and keys of every shape). */
export function openssl(script: string, output: string): Buffer {
  return execFileSync('sh', ['-c', `d=$(mktemp -d) && cd $d && (${script}) >/dev/null 2>&1 && cat ${output}; rm -rf $d`]);
}

export const sha256 = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
