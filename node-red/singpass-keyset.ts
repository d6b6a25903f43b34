/**
 * "Key set" endpoint node: serves your client's PUBLIC keys (JWKS) on Node-RED's HTTP server, at the key set URL you
 * registered with the signing service, Corppass and/or Singpass. One URL can publish the keys of several config nodes.
 * Only public members ever leave (the core strips private parts and refuses duplicate key IDs).
 */
import { keySetResponse } from '../src/login';
import type { LoadedKey } from '../src/keys';
import { asError } from './lib/run';
import { signingKeyOf, type SignClientNode } from './lib/sign-client';
import type { LoginClientNode } from './lib/login-client';
import type { HttpRequest, HttpResponse, Node, NodeAPI, NodeDef } from './lib/types';

const routes = new Map<string, (req: HttpRequest, res: HttpResponse) => void>();
const registered = new Set<string>();

type Def = NodeDef & { url?: string; signClient?: string; corppassClient?: string; singpassClient?: string };

export = function register(RED: NodeAPI): void {
  function KeySet(this: Node, def: Def) {
    RED.nodes.createNode(this, def);
    const node = this;
    const url = typeof def.url === 'string' && def.url.startsWith('/') ? def.url : '/singpass/jwks';
    const config = (id: unknown) => (typeof id === 'string' && id ? RED.nodes.getNode(id) : null);
    async function publicKeys(): Promise<LoadedKey[]> {
      const keys: LoadedKey[] = [];
      const sign = config(def.signClient) as SignClientNode | null;
      if (sign) keys.push(await signingKeyOf(sign));
      for (const id of [def.corppassClient, def.singpassClient]) {
        const login = config(id) as LoginClientNode | null;
        if (login) keys.push(...(await login.publicKeys()));
      }
      return keys;
    }
    routes.set(url, (_req, res) => {
      publicKeys()
        .then((keys) => {
          const r = keySetResponse(keys);
          res.writeHead(r.status, r.headers).end(r.body);
          node.status({ fill: 'green', shape: 'dot', text: `${keys.length} public key(s) served` });
        })
        .catch((e: unknown) => {
          const err = asError(e);
          node.error(err, { payload: { keySetAnswered: 503 } }); // a Catch node can alert: the providers cannot check our requests
          node.status({ fill: 'red', shape: 'ring', text: err.code });
          if (!res.headersSent) res.writeHead(503, { 'content-type': 'text/plain' }).end('key set unavailable');
        });
    });
    if (!registered.has(url)) {
      registered.add(url);
      RED.httpNode.get(url, (req, res, next) => {
        const h = routes.get(url);
        if (h) h(req, res);
        else next();
      });
    }
    node.status({ fill: 'grey', shape: 'ring', text: `GET ${url}` });
    node.on('close', (_removed, done) => {
      routes.delete(url);
      done();
    });
  }
  RED.nodes.registerType('singpass-keyset', KeySet as never);
};
