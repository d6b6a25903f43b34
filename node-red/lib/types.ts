/**
 * The small part of Node-RED's runtime API these nodes use (Node-RED 4.x and 5.x), typed here instead of pulling
 * `@types/node-red` and its Express typings into the package.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type NodeMessage = Record<string, unknown> & { _msgid?: string; payload?: unknown };

export interface NodeStatus {
  fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  shape?: 'ring' | 'dot';
  text?: string;
}

export interface ContextStore {
  get(key: string, store: string | undefined, cb: (err: Error | null | undefined, value: unknown) => void): void;
  /** Several keys in one read: the values come as further callback arguments, in order. */
  get(keys: string[], store: string | undefined, cb: (err: Error | null | undefined, ...values: unknown[]) => void): void;
  set(key: string, value: unknown, store: string | undefined, cb: (err?: Error | null) => void): void;
  keys(store: string | undefined, cb: (err: Error | null | undefined, keys: string[]) => void): void;
}

export interface NodeContext extends ContextStore {
  global: ContextStore;
  flow: ContextStore;
}

/** A node instance after `RED.nodes.createNode(this, config)`. */
export interface Node<Creds = Record<string, string | undefined>> {
  id: string;
  type: string;
  name?: string;
  credentials: Creds;
  on(event: 'input', listener: (msg: NodeMessage, send: (msg: NodeMessage | (NodeMessage | null)[]) => void, done: (err?: Error) => void) => void): void;
  on(event: 'close', listener: (removed: boolean, done: () => void) => void): void;
  send(msg: NodeMessage | (NodeMessage | null)[]): void;
  status(status: NodeStatus | Record<string, never>): void;
  error(err: unknown, msg?: NodeMessage): void;
  warn(message: unknown): void;
  log(message: unknown): void;
  context(): NodeContext;
}

/** Express-like request/response, as Node-RED's HTTP server hands them over. */
export type HttpRequest = IncomingMessage & { body?: unknown; _body?: boolean };
export type HttpResponse = ServerResponse;
export type HttpHandler = (req: HttpRequest, res: HttpResponse, next: (err?: unknown) => void) => void;

export interface NodeAPI {
  nodes: {
    createNode(node: object, config: object): void;
    registerType(type: string, constructor: new (config: never) => unknown, options?: { credentials?: Record<string, { type: 'text' | 'password' }> }): void;
    getNode(id: string): unknown;
  };
  /** Node-RED's HTTP server for flows (http-in nodes): an Express app. */
  httpNode: { post(path: string, ...handlers: HttpHandler[]): void; get(path: string, ...handlers: HttpHandler[]): void };
  settings: { userDir?: string; contextStorage?: Record<string, unknown>; [key: string]: unknown };
  log: { info(m: string): void; warn(m: string): void; error(m: string): void };
  events?: { on(event: string, listener: (...args: unknown[]) => void): void; removeListener(event: string, listener: (...args: unknown[]) => void): void };
}

export interface NodeDef {
  id: string;
  type: string;
  name?: string;
  [key: string]: unknown;
}
