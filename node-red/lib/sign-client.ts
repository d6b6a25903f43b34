/**
 * What the "Singpass Sign API client" config node gives the signing nodes: the signing engine (built once from the
 * settings and credentials, then reused so the service key set and intermediates stay cached) and the session
 * store. The key/URL checks and the environment table are the core's (src/setup), named with this node's labels.
 */
import * as path from 'node:path';
import { SingpassFlowsError, invalidInput } from '../../src/errors';
import { createSigningEngine, sessionPolicy, type DurableSessionStore, type SessionPolicy, type SigningEngine } from '../../src/session';
import { createNotificationTokens } from '../../src/sign';
import { signSetup } from '../../src/setup';
import { configLabels } from './labels';
import type { LoadedKey } from '../../src/keys';
import type { StoreChoice } from './store-factory';
import type { Node, NodeAPI } from './types';

export const SIGN_CLIENT = 'singpass-sign-client';
export const NOTIFICATION_SECRET = 'singpass-notification-secret';

export interface SignClientSettings {
  environment: string;
  sandboxUrl?: string;
  baseUrl?: string;
  keySetUrl?: string;
  tsaUrl?: string;
  clientId: string;
  trustedRoots?: string;
  domainName: string;
  tenantId: string;
  /** The assertion's `aud` when the service asked for another than the API's origin (empty: the default). */
  audience?: string;
  /** Folder of the session store: records, PDFs being signed, kept deliveries (empty: `<userDir>/singpass-sessions`). */
  sessionDir?: string;
  /** What older versions kept sessions in (context store name, PDF folder): read once to import those sessions. */
  contextStore?: string;
  documentDir?: string;
  /** id of the singpass-notification-secret config node. */
  notificationSecret?: string;
  /** "folder" (default: one Node-RED) or "postgres" (several instances), and PostgreSQL's connection fields. */
  sessionStore?: StoreChoice['sessionStore'];
  pgHost?: string;
  pgPort?: string;
  pgDatabase?: string;
  pgUser?: string;
  pgTablePrefix?: string;
  pgSsl?: boolean;
  pgTakeOverSeconds?: string;
  /** Seconds the flow has to acknowledge a hand-over of the signed PDF before it is handed over again (empty: the policy's). */
  handOverLeaseSeconds?: string;
  /** Seconds an unacknowledged signed PDF is handed over again before the session ends undelivered (empty: the policy's). */
  handOverWindowSeconds?: string;
}

/** The hand-over part of the session policy, as the core's driver takes it. */
export type HandOverPolicy = Pick<SessionPolicy, 'handOverLeaseMs' | 'handOverWindowMs'>;

export interface SignClientNode extends Node<{ signingKey?: string; pgPassword?: string }> {
  settings: SignClientSettings;
  /** The engine (rejects with the config problem, e.g. KEY_INVALID naming the field). */
  engine(): Promise<SigningEngine>;
  /** The core's session store the settings chose (store-factory.ts); every signing node goes through it. */
  store: DurableSessionStore;
  /** The hand-over lease and window from the settings (the session policy's where empty), for the core's driver. */
  handOverPolicy: HandOverPolicy;
}

export type NotificationSecretNode = Node<{ secret?: string; previousSecret?: string }>;

/**
 * Build the engine lazily and keep it (its caches are the point). A failure is not kept: it may be transient (the
 * sandbox's root certificate not reachable yet), so the next message tries again.
 */
export function engineFactory(RED: NodeAPI, node: SignClientNode): () => Promise<SigningEngine> {
  let engine: Promise<SigningEngine> | undefined;
  return () => {
    if (!engine) {
      const building = buildEngine(RED, node);
      engine = building;
      building.catch(() => {
        if (engine === building) engine = undefined;
      });
    }
    return engine;
  };
}

/** The signing key alone (no network): checked on deploy so a wrong paste is reported at once; published by the key-set node. */
export async function signingKeyOf(node: Pick<SignClientNode, 'settings' | 'credentials' | 'name' | 'id'>): Promise<LoadedKey> {
  return (await signSetup({ ...node.settings, signingKey: node.credentials?.signingKey ?? '' }, configLabels('Singpass Sign API client', node))).signingKey;
}

async function buildEngine(RED: NodeAPI, node: SignClientNode): Promise<SigningEngine> {
  const s = node.settings;
  const setup = await signSetup({ ...s, signingKey: node.credentials?.signingKey ?? '' }, configLabels('Singpass Sign API client', node));
  const secretNode = s.notificationSecret ? (RED.nodes.getNode(s.notificationSecret) as NotificationSecretNode | null) : null;
  if (!secretNode) throw invalidInput('Notification token secret', `the Singpass Sign API client "${node.name || node.id}" needs a notification token secret config node`);
  const secret = secretNode.credentials?.secret ?? '';
  const previous = secretNode.credentials?.previousSecret?.trim();
  const notificationTokens = createNotificationTokens({ secret, previousSecrets: previous ? [previous] : [] });
  for (const [field, value] of [['Domain name', s.domainName], ['Tenant ID', s.tenantId]] as const) {
    if (typeof value !== 'string' || value.trim() === '') throw invalidInput(field, `is required in the Singpass Sign API client "${node.name || node.id}"`);
  }
  const trustedRoots = await setup.trustedRoots();
  if (trustedRoots.length === 0) {
    throw invalidInput('Trusted roots', `paste the root CA certificate(s) (PEM) your signers' certificates chain to into the Singpass Sign API client "${node.name || node.id}"`);
  }
  return createSigningEngine({
    client: setup.client,
    serviceKeySetUrl: setup.endpoints.keySetUrl,
    notificationTokens,
    trustedRoots,
    tsaUrl: setup.endpoints.tsaUrl,
    domainName: s.domainName.trim(),
    tenantId: s.tenantId.trim(),
  });
}

/**
 * The key of the signer's links (the core's signer-links: HMAC over sign_ref, purpose and expiry): the client's
 * notification token secret, and its previous secret while a rotation is under way. Never logged.
 */
export function signerLinkKeyOf(RED: NodeAPI, client: SignClientNode): { secret: string; previousSecrets: string[] } {
  const id = client.settings.notificationSecret;
  const secretNode = id ? (RED.nodes.getNode(id) as NotificationSecretNode | null) : null;
  const secret = secretNode?.credentials?.secret ?? '';
  if (!secretNode || !secret) throw invalidInput('Notification token secret', `the Singpass Sign API client "${client.name || client.id}" needs a notification token secret config node with its secret (it also keys the signer's links)`);
  const previous = secretNode.credentials?.previousSecret?.trim();
  return { secret, previousSecrets: previous ? [previous] : [] };
}

/** The session folder: the client's "Session folder" (relative to the user directory), else `<userDir>/singpass-sessions`. */
export function sessionDirOf(RED: NodeAPI, s: SignClientSettings): string {
  const userDir = RED.settings.userDir ?? '.';
  return s.sessionDir && s.sessionDir.trim() ? path.resolve(userDir, s.sessionDir.trim()) : path.join(userDir, 'singpass-sessions');
}

/** Where older versions kept the PDFs being signed (for the one-time import of their sessions). */
export function legacyDocumentDirOf(RED: NodeAPI, s: SignClientSettings): string {
  const userDir = RED.settings.userDir ?? '.';
  return s.documentDir && s.documentDir.trim() ? path.resolve(userDir, s.documentDir.trim()) : path.join(userDir, 'singpass-sign-documents');
}

/**
 * The client's hand-over settings (seconds) as the session policy's lease and window; empty fields keep the policy's
 * values. Throws INVALID_INPUT naming the field (reported at deploy).
 */
export function handOverPolicyOf(s: Pick<SignClientSettings, 'handOverLeaseSeconds' | 'handOverWindowSeconds'>, clientName: string): HandOverPolicy {
  const seconds = (value: string | undefined, field: string, max: number): number | undefined => {
    const t = (value ?? '').trim();
    if (t === '') return undefined;
    const n = Number(t);
    if (!Number.isFinite(n) || n < 1 || n > max) throw invalidInput(field, `"${t}" is not a number of seconds between 1 and ${max} (Singpass Sign API client "${clientName}"; empty: the default)`);
    return Math.round(n * 1000);
  };
  const p = sessionPolicy({
    handOverLeaseMs: seconds(s.handOverLeaseSeconds, 'Hand-over lease', 24 * 3600),
    handOverWindowMs: seconds(s.handOverWindowSeconds, 'Hand-over window', 30 * 24 * 3600),
  });
  if (p.handOverWindowMs < p.handOverLeaseMs) throw invalidInput('Hand-over window', `must be at least the hand-over lease (Singpass Sign API client "${clientName}")`);
  return { handOverLeaseMs: p.handOverLeaseMs, handOverWindowMs: p.handOverWindowMs };
}

/** The config node a signing node points at, or a clear error when it is missing. */
export function signClientOf(RED: NodeAPI, id: unknown, nodeName: string): SignClientNode {
  const client = typeof id === 'string' && id ? (RED.nodes.getNode(id) as SignClientNode | null) : null;
  if (!client || typeof client.engine !== 'function') {
    throw new SingpassFlowsError('INVALID_INPUT', `${nodeName}: choose a "Singpass Sign API client" config node`, { field: 'client' });
  }
  return client;
}
