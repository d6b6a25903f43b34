/** What the Corppass / Singpass login client config nodes give the login and key-set nodes. */
import { SingpassFlowsError } from '../../src/errors';
import type { CorppassProfileSettings, LoginProvider, SettingLabels } from '../../src/setup';
import type { LoadedKey } from '../../src/keys';
import type { LoginClientOptions } from '../../src/login';
import type { Node, NodeAPI } from './types';

export const LOGIN_CLIENT: Record<LoginProvider, string> = { corppass: 'corppass-client', singpass: 'singpass-login-client' };

export interface LoginClientNode extends Node<{ signingKey?: string; encryptionKey?: string; transactionSecret?: string }> {
  provider: LoginProvider;
  /** Checked client options (keys loaded); rejects naming the field to fix. */
  options(): Promise<LoginClientOptions & { transactionSecret: string }>;
  publicKeys(): Promise<LoadedKey[]>;
  /** Corppass: the chosen profile ("legacy" | "fapi") and app type, as entered (checked when a client is made). */
  corppassProfile: CorppassProfileSettings;
  /** How the core names this config node's fields in its messages. */
  labels: SettingLabels;
}

/** The login client config node a node points at, or a clear error when it is missing. */
export function loginClientOf(RED: NodeAPI, id: unknown, provider: LoginProvider, nodeName: string): LoginClientNode {
  const client = typeof id === 'string' && id ? (RED.nodes.getNode(id) as LoginClientNode | null) : null;
  if (!client || typeof client.options !== 'function' || client.provider !== provider) {
    throw new SingpassFlowsError('INVALID_INPUT', `${nodeName}: choose a "${provider === 'corppass' ? 'Corppass client' : 'Singpass login client'}" config node`, { field: 'client' });
  }
  return client;
}
