import { request } from 'undici';

/**
 * The default transport of `httpRequest`: undici's `request` on its global pool, not `fetch`. Every back-channel call
 * here is a small body in, a small body out; fetch wraps each in WHATWG streams and Headers that cost several times
 * the exchange itself, and a session makes four such calls. Connections are kept and reused as fetch's are.
 * Redirects are not followed (`request` never does). A body this path cannot send as is (a stream, a Blob, form data)
 * goes through fetch instead: `canSendDirectly`.
 */

export interface DirectAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
}

type DirectBody = string | Uint8Array | undefined;

/** Whether `init` can go out on the direct path (string, bytes, form parameters or no body). */
export function canSendDirectly(init: RequestInit): boolean {
  const b = init.body;
  return b === undefined || b === null || typeof b === 'string' || b instanceof Uint8Array || b instanceof URLSearchParams;
}

/**
 * One exchange; `signal` covers the answer's body too. `tooLarge` is thrown as soon as the answer exceeds `maxBytes`
 * (announced or streamed), without reading the rest.
 */
export async function directExchange(url: string, init: RequestInit, signal: AbortSignal, maxBytes: number, tooLarge: (status: number) => Error): Promise<DirectAnswer> {
  const headers = new Headers(init.headers);
  let body: DirectBody;
  if (init.body instanceof URLSearchParams) {
    body = init.body.toString();
    // what fetch sends for form parameters when the caller names no type
    if (!headers.has('content-type')) headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
  } else {
    body = (init.body ?? undefined) as DirectBody;
  }
  // what fetch sends by default: some service front ends (WAF rule sets) refuse a request without a User-Agent
  if (!headers.has('user-agent')) headers.set('user-agent', 'singpass-flows');
  if (!headers.has('accept')) headers.set('accept', '*/*');
  const out: Record<string, string> = {};
  headers.forEach((value, name) => { out[name] = value; });
  const res = await request(url, { method: (init.method ?? 'GET') as 'GET', headers: out, body, signal });
  const answerHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (Array.isArray(value)) for (const v of value) answerHeaders.append(name, v);
    else if (value !== undefined) answerHeaders.set(name, value);
  }
  if (Number(answerHeaders.get('content-length') ?? 0) > maxBytes) {
    res.body.on('error', () => undefined).destroy(); // the connection is dropped, nothing more is read
    throw tooLarge(res.statusCode);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw tooLarge(res.statusCode); // leaving the loop destroys the stream
    chunks.push(chunk);
  }
  return { status: res.statusCode, headers: answerHeaders, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total) };
}
