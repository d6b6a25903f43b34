/**
 * node-red-node-test-helper set up for this package's nodes (loaded from the TypeScript sources) plus the core
 * catch node, so tests see what a flow's Catch node would get.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/* eslint-disable @typescript-eslint/no-require-imports */
export const helper = require('node-red-node-test-helper');
helper.init(require.resolve('node-red'));
export const configNodes = require('../../node-red/singpass-config');
export const signNodes = require('../../node-red/singpass-sign');
export const webhookNodes = require('../../node-red/singpass-sign-webhook');
export const catchNode = require('@node-red/nodes/core/common/25-catch.js');
/* eslint-enable @typescript-eslint/no-require-imports */

export type TestNode = {
  on(event: string, cb: (...args: any[]) => void): void;
  receive(msg: Record<string, unknown>): void;
  error: { args: unknown[][] } & ((...a: unknown[]) => void);
  warn: { args: unknown[][] } & ((...a: unknown[]) => void);
  status: { args: unknown[][] } & ((...a: unknown[]) => void);
};

export function getNode(id: string): TestNode {
  return helper.getNode(id) as unknown as TestNode;
}

/** A fresh EC private key as JWK text and PEM, and an RSA one (the wrong type). */
export function keys(): { jwk: string; pem: string; rsaPem: string; publicPem: string } {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    jwk: JSON.stringify(ec.privateKey.export({ format: 'jwk' })),
    pem: ec.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    rsaPem: rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicPem: ec.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
  };
}

/** Resolve with the next message the node receives (or reject after `ms`). */
export function nextMessage(node: TestNode, ms = 20_000): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no message within ${ms} ms`)), ms);
    node.on('input', (msg: Record<string, any>) => {
      clearTimeout(t);
      resolve(msg);
    });
  });
}

/** Send `msg` to `nodeId`; resolve with what the flow's Catch node (wired to a helper node `caught`) got. */
export function caught(nodeId: string, msg: Record<string, unknown>): Promise<Record<string, any>> {
  const c = nextMessage(getNode('caught'));
  getNode(nodeId).receive(msg);
  return c;
}

/** Wait until `node.error` was called (Node-RED reports config-node problems this way). */
export async function nextError(node: TestNode, ms = 20_000): Promise<unknown> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (node.error.args.length > 0) return node.error.args[0]![0];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no node.error within ${ms} ms`);
}

/** Node-RED 4 treats a node without x/y as a config node: give flow nodes (those with `z`) a position. */
export function positioned<T extends Record<string, unknown>>(flow: T[]): T[] {
  return flow.map((n) => (n.z ? { x: 100, y: 100, ...n } : n));
}

/** A root CA certificate for a client's "Trusted roots" (made by OpenSSL; nothing is ever chained to it here). */
export function rootPem(): string {
  return execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=Test Root', '-days', '1', '-keyout', '/dev/null'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

/**
 * A fresh session folder for each test (the client's "Session folder"): the test helper has no userDir, so the
 * default would be the working directory, and a folder per test keeps one test's sessions out of the next one's
 * sweep. Call at the top of a test file; the returned function gives the current test's folder.
 */
export function sessionDirs(): () => string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-nr-sessions-'));
  let n = 0;
  let current = path.join(root, '0');
  beforeEach(() => {
    current = path.join(root, String(++n));
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  return () => current;
}
