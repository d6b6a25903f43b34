import { SingpassFlowsError, invalidInput } from './errors';
import { canSendDirectly, directExchange } from './http-direct';
import { proxyRouteFor, type ProxyRoute } from './http-proxy';

/**
 * The HTTP seam of the core. Anything fetch-compatible works: n8n's `helpers.httpRequest` wrapped as fetch, or a
 * test double. Without one, calls go out directly (http-direct.ts) or through the proxy the environment names
 * (http-proxy.ts).
 */
export type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

export interface HttpOptions {
  fetch?: Fetch;
  /** Per-request timeout in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Refuse a body larger than this many bytes (HTTP_UNEXPECTED_RESPONSE), without reading the rest (default 16 MiB). */
  maxBytes?: number;
}

export interface HttpResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
/**
 * Every answer is capped: some URLs come from documents anyone can upload (the OCSP, caIssuers and CRL addresses in
 * the certificates of a PDF's earlier signatures), and a server streaming without end must not fill the engine's
 * memory. Far above any real answer here (key sets, tokens, OCSP, timestamps: a few KB; CRLs pass their own cap).
 */
export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

/**
 * One HTTP exchange with the rules every back-channel call here needs: a timeout, redirects never followed (a 3xx
 * would forward assertions and tokens elsewhere), and transport failures turned into stable error codes.
 * HTTP error statuses are returned, not thrown: each protocol maps its own error bodies.
 */
export async function httpRequest(url: string, init: RequestInit = {}, options: HttpOptions = {}): Promise<HttpResponse> {
  // A caller's own fetch is used as given (it has its own transport); only the default one goes through a proxy.
  const route = options.fetch ? undefined : proxyRouteForUrl(url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const target = safeUrl(url);
  const via = route ? ` through the proxy ${route.display} (${route.variable})` : '';
  const details = { url: target, ...(route && { proxy: route.display }) };
  const transportError = (e: unknown): SingpassFlowsError => {
    const err = e as Error;
    if (err?.name === 'TimeoutError' || err?.name === 'AbortError') {
      return new SingpassFlowsError('HTTP_TIMEOUT', `No answer from ${target}${via} within ${timeoutMs} ms`, { ...details, retryable: true }, { cause: e });
    }
    if (route) return proxyFailure(err, route, target, details);
    return new SingpassFlowsError('HTTP_NETWORK', `Cannot reach ${target}: ${describeNetworkError(err)}`, { ...details, retryable: true }, { cause: e });
  };
  const redirectRefused = (status: number): SingpassFlowsError =>
    new SingpassFlowsError('HTTP_REDIRECT_REFUSED', `${target} answered with a redirect (${status}); redirects are not followed on back-channel calls`, { url: target, status, retryable: false });
  // the timeout covers the body too: a server that sends headers and then trickles is cut off like a silent one
  const signal = AbortSignal.timeout(timeoutMs);
  if (!options.fetch && !route && canSendDirectly(init)) {
    let answer: HttpResponse;
    try {
      answer = await directExchange(url, init, signal, maxBytes, (status) => tooLargeError(target, status, maxBytes));
    } catch (e) {
      throw e instanceof SingpassFlowsError ? e : transportError(e);
    }
    if (answer.status >= 300 && answer.status < 400) throw redirectRefused(answer.status);
    return answer;
  }
  const doFetch = options.fetch ?? route?.fetch ?? globalThis.fetch;
  let response: Response;
  try {
    response = await doFetch(url, { ...init, redirect: 'manual', signal });
  } catch (e) {
    throw transportError(e);
  }
  if (response.status >= 300 && response.status < 400) throw redirectRefused(response.status);
  try {
    const body = await readCapped(response, maxBytes, target);
    return { status: response.status, headers: response.headers, body };
  } catch (e) {
    throw e instanceof SingpassFlowsError ? e : transportError(e);
  }
}

function tooLargeError(target: string, status: number, maxBytes: number): SingpassFlowsError {
  return new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', `${target} sent more than ${maxBytes} bytes; the answer was refused`, { url: target, status, maxBytes, retryable: false });
}

async function readCapped(response: Response, maxBytes: number, target: string): Promise<Buffer> {
  const tooLarge = (): SingpassFlowsError => tooLargeError(target, response.status, maxBytes);
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return Buffer.from(await response.arrayBuffer());
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** Parse a JSON body or fail with a stable code; `what` names the document for the message. */
export function parseJsonBody(res: HttpResponse, what: string): unknown {
  try {
    return JSON.parse(res.body.toString('utf8'));
  } catch {
    throw new SingpassFlowsError('HTTP_UNEXPECTED_RESPONSE', `${what} is not valid JSON (HTTP ${res.status})`, { status: res.status });
  }
}

/** URL without query or fragment, for messages and logs (queries can carry codes and tokens). */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '<invalid URL>';
  }
}

function describeNetworkError(err: Error): string {
  // fetch wraps the socket's error as `cause`; undici's request throws it as is
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const code = (err as { code?: unknown })?.code;
  return cause?.code ?? cause?.message ?? (typeof code === 'string' && code.startsWith('E') ? code : undefined) ?? err?.message ?? 'network error';
}

function proxyRouteForUrl(url: string): ProxyRoute | undefined {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return undefined; // fetch refuses it with its own error, reported as before
  }
  return proxyRouteFor(target);
}

type ErrorChain = { code?: unknown; message?: unknown; cause?: unknown } | undefined;

/**
 * A request through a proxy that failed before any answer: name the proxy (without credentials), say what it did,
 * and for a loopback target point at NO_PROXY — a proxy elsewhere cannot reach this machine's 127.0.0.1.
 */
function proxyFailure(err: Error, route: ProxyRoute, target: string, details: Record<string, unknown>): SingpassFlowsError {
  let reason: string | undefined;
  for (let e = err as ErrorChain, depth = 0; e && depth < 5 && !reason; e = e.cause as ErrorChain, depth++) {
    // undici's words when the proxy answers CONNECT with anything but 200, or a forwarded request with 407 (the
    // only place the status is kept; test/http-proxy.test.ts pins them for the undici version we depend on)
    const refused = /Proxy response \((\d{3})\)|Proxy Authentication Required \((407)\)/.exec(String(e.message ?? ''));
    if (refused) {
      const status = Number(refused[1] ?? refused[2]);
      if (status === 401 || status === 407) return proxyAuthFailure(status, route, target, details, err);
      reason = `the proxy could not open a tunnel to it (HTTP ${status})`;
    } else if (typeof e.code === 'string' && /^E[A-Z_]+$/.test(e.code)) {
      reason = e.code;
    }
  }
  const loopback = LOOPBACK_HOSTS.has(new URL(target).hostname)
    ? '. A proxy on another machine cannot reach this one\'s 127.0.0.1: add 127.0.0.1,localhost to NO_PROXY for local services such as the sandbox'
    : '';
  return new SingpassFlowsError('HTTP_NETWORK', `Cannot reach ${target} through the proxy ${route.display} (${route.variable}): ${reason ?? describeNetworkError(err)}${loopback}`, { ...details, retryable: true }, { cause: err });
}

/** `proxyStatus`, not `status`: the answer is the proxy's, and callers read `status` as the service's. */
function proxyAuthFailure(status: number, route: ProxyRoute, target: string, details: Record<string, unknown>, cause: unknown): SingpassFlowsError {
  const what = route.display.includes('***@')
    ? `it refused the user name and password in ${route.variable}`
    : `it needs a user name and password: put them in ${route.variable} as http://user:password@host:port (percent-encoded)`;
  return new SingpassFlowsError('HTTP_NETWORK', `The proxy ${route.display} (${route.variable}) refused the request to ${target}: ${what} (HTTP ${status})`, { ...details, proxyStatus: status, retryable: false }, { cause });
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * A configured service or redirect URL: https only, or plain http on a loopback host (127.0.0.1, localhost, ::1)
 * when `allowLoopbackHttp` is set — for the local sandbox. Custom schemes are refused (Singpass no longer accepts
 * them). `INVALID_INPUT` names the field.
 */
export function requireHttpsUrl(field: string, value: unknown, options: { allowLoopbackHttp?: boolean; example?: string } = {}): URL {
  const eg = options.example ? `, e.g. ${options.example}` : '';
  if (typeof value !== 'string' || !value) throw invalidInput(field, `a URL is required${eg}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Quoted by JSON.stringify (control characters escaped) and cut: the value may be pasted garbage or hostile.
    throw invalidInput(field, `${JSON.stringify(value.slice(0, 100))} is not a valid absolute URL${eg}`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && options.allowLoopbackHttp && LOOPBACK_HOSTS.has(url.hostname)) return url;
  throw invalidInput(field, url.protocol === 'http:'
    ? 'must use https (plain http only on 127.0.0.1/localhost, for the local sandbox)'
    : `must be an https URL (custom schemes like "${url.protocol}" are not accepted)`);
}
