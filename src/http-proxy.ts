import { BlockList, isIP } from 'node:net';
import type { ProxyAgent, RequestInit as UndiciRequestInit } from 'undici';
import { invalidInput } from './errors';
import type { Fetch } from './http';

/**
 * Corporate proxies for outbound HTTP. Node's global fetch ignores the proxy variables, so an n8n or Node-RED behind
 * a proxy could not reach the services. We read the variables both engines' own HTTP nodes honour (n8n's request
 * helpers and Node-RED's http request node, both by proxy-from-env's rules), lower-case first:
 * - `http_proxy`/`HTTP_PROXY` for http:// targets, `https_proxy`/`HTTPS_PROXY` for https:// targets — never one for
 *   the other (curl's rule too; undici's EnvHttpProxyAgent would send https through HTTP_PROXY);
 * - `all_proxy`/`ALL_PROXY` when the scheme's own variable is not set;
 * - `no_proxy`/`NO_PROXY`: hosts reached directly (see {@link bypassesProxy}). Loopback is NOT exempt by itself
 *   (neither engine exempts it): with a proxy set, the local sandbox needs `NO_PROXY=127.0.0.1,localhost`.
 * The variables are read on every request (a few string reads), so a changed environment applies at once; the
 * connection pool of each proxy is kept across requests.
 */

export interface ProxyRoute {
  /** The variable the proxy came from, e.g. `HTTPS_PROXY` (for messages). */
  variable: string;
  /** The proxy's origin with any user name and password replaced by `***` — the only form to log or show. */
  display: string;
  /** Fetch through this proxy (undici's fetch with its ProxyAgent). */
  fetch: Fetch;
}

const SCHEME_VARIABLES: Record<string, string[]> = {
  'http:': ['http_proxy', 'HTTP_PROXY', 'all_proxy', 'ALL_PROXY'],
  'https:': ['https_proxy', 'HTTPS_PROXY', 'all_proxy', 'ALL_PROXY'],
};

/** The proxy a request to `target` goes through, or undefined for a direct connection. */
export function proxyRouteFor(target: URL, env: NodeJS.ProcessEnv = process.env): ProxyRoute | undefined {
  const variable = (SCHEME_VARIABLES[target.protocol] ?? []).find((name) => env[name]?.trim());
  if (!variable) return undefined;
  if (bypassesProxy(target, env.no_proxy?.trim() || env.NO_PROXY?.trim() || '')) return undefined;
  const proxy = parseProxyUrl(variable, env[variable]!.trim());
  const display = redactProxyUrl(proxy);
  return { variable, display, fetch: fetchThrough(proxy) };
}

/**
 * NO_PROXY as curl reads it: entries separated by commas or spaces; `*` alone = every host; `example.com`,
 * `.example.com` and `*.example.com` all match example.com and its subdomains; an entry may name a port
 * (`host:8443`, `[::1]:8080`); an IP range in CIDR form (`10.0.0.0/8`) matches IP-address targets.
 */
export function bypassesProxy(target: URL, noProxy: string): boolean {
  const host = unbracket(target.hostname.toLowerCase());
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  for (const raw of noProxy.toLowerCase().split(/[\s,]+/)) {
    if (!raw) continue;
    if (raw === '*') return true;
    const { name, entryPort } = splitPort(raw);
    if (entryPort !== undefined && entryPort !== port) continue;
    const slash = name.indexOf('/');
    if (slash > 0) {
      if (inCidr(host, name.slice(0, slash), Number(name.slice(slash + 1)))) return true;
      continue;
    }
    const domain = unbracket(name.replace(/^\*/, '').replace(/^\./, ''));
    if (domain && (host === domain || host.endsWith(`.${domain}`))) return true;
  }
  return false;
}

/** `user:password@` never leaves this module: messages, logs and error details get `***@` instead. */
function redactProxyUrl(proxy: URL): string {
  return `${proxy.protocol}//${proxy.username || proxy.password ? '***@' : ''}${proxy.host}`;
}

function parseProxyUrl(variable: string, value: string): URL {
  let url: URL;
  try {
    // No scheme ("proxy.corp:3128"): a plain-HTTP proxy, as curl assumes.
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    // The value is not echoed: it may hold a password.
    throw invalidInput(variable, 'is not a valid proxy URL; expected http://host:port (or http://user:password@host:port)');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidInput(variable, `names a ${url.protocol.slice(0, -1)} proxy (${redactProxyUrl(url)}); only http:// and https:// proxies are supported`);
  }
  return url;
}

function splitPort(entry: string): { name: string; entryPort?: number } {
  const m = /^(\[[^\]]*\]|[^:]*):(\d+)$/.exec(entry); // a bare IPv6 address (several colons) has no port
  return m ? { name: m[1], entryPort: Number(m[2]) } : { name: entry };
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function inCidr(host: string, network: string, prefix: number): boolean {
  const family = isIP(host);
  const netFamily = isIP(network);
  if (!family || family !== netFamily || !Number.isInteger(prefix)) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  try {
    const list = new BlockList();
    list.addSubnet(network, prefix, type);
    return list.check(host, type);
  } catch {
    return false; // a prefix out of range: the entry matches nothing
  }
}

/** One agent (one connection pool) per proxy URL; more than a few only when the environment keeps changing. */
const agents = new Map<string, ProxyAgent>();
const MAX_AGENTS = 4;

function fetchThrough(proxy: URL): Fetch {
  return async (url, init) => {
    // Loaded on first use: most installations have no proxy and need not load undici (~45 ms).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const undici = require('undici') as typeof import('undici');
    let agent = agents.get(proxy.href);
    if (!agent) {
      if (agents.size >= MAX_AGENTS) {
        const [oldest, old] = agents.entries().next().value!;
        agents.delete(oldest);
        void old.close().catch(() => undefined); // lets requests under way finish
      }
      // proxyTunnel false: http:// targets are forwarded (absolute-form request), as curl and the engines do —
      // proxies commonly allow CONNECT to port 443 only, and OCSP/CRL/CA-issuer URLs are plain http on port 80.
      // https:// targets always go through a CONNECT tunnel, so TLS stays end to end.
      agent = new undici.ProxyAgent({ uri: proxy.href, proxyTunnel: false });
      agents.set(proxy.href, agent);
    }
    // undici's own fetch with its own agent (as n8n does): Node's bundled fetch is another undici version.
    const response = await undici.fetch(url, { ...(init as UndiciRequestInit), dispatcher: agent });
    return response as unknown as Response;
  };
}

/** Close the proxies' connection pools (requests under way finish first). For shutdown and tests. */
export async function closeOutboundProxies(): Promise<void> {
  const open = [...agents.values()];
  agents.clear();
  await Promise.all(open.map((a) => a.close().catch(() => undefined)));
}
