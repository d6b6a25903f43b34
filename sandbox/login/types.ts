import type { SandboxService } from '../http';
import type { LoginEndpoint, Misbehaviour } from './misbehaviour';

/** Options shared by both providers. */
export interface ProviderOptions {
  /** Server origin, e.g. `http://127.0.0.1:PORT` (no trailing slash). The issuer is derived from it. */
  baseUrl: string;
  /** Milliseconds since the epoch; injectable so tests can freeze time. */
  clock?: () => number;
  /** Mount prefix; default `/corppass` or `/singpass`. */
  prefix?: string;
  /**
   * RFC 9207 `iss` in authorization responses: when true the provider sends it on every redirect and advertises
   * `authorization_response_iss_parameter_supported: true`; when false it sends none and advertises `false`.
   * Default as the real services behave today: Singpass FAPI true (since 11 June 2026), Corppass false (turn it on
   * to rehearse the day Corppass adds it). The `authIss` switch still distorts or removes it either way.
   */
  issParameter?: boolean;
}

/** A relying party known to the provider. */
export interface ClientRegistration {
  clientId: string;
  /**
   * RP public key set URL, fetched (no cache) to verify client assertions (`use: sig` keys) and to find the RP's
   * encryption key (`use: enc`, by kid; the newest-listed enc key is used unless a switch says otherwise).
   */
  jwksUrl: string;
  /**
   * Exact redirect URIs. Singpass requires `https:`; `http://127.0.0.1…`/`http://localhost…` loopback URIs are
   * accepted too so that local demos work (documented deviation).
   */
  redirectUris: string[];
}

/** A decoded JWT as the provider saw it (no verification implied by the shape; see `valid`). */
export interface DecodedJwt {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  /** The compact token as received. */
  compact: string;
}

/** What the provider recorded about one request (everything the client sent — this is a test tool). */
export interface RecordedRequest {
  /** Sequence number within this provider, from 1. */
  seq: number;
  /** Provider clock (ms) at arrival. */
  at: number;
  /** Endpoint name, or `redirectSink` / `attackerJwks` / `unknown` for sandbox-only routes. */
  endpoint: LoginEndpoint | 'redirectSink' | 'attackerJwks' | 'unknown';
  method: string;
  /** Path and query as received. */
  url: string;
  /** Lower-cased header names. */
  headers: Record<string, string | string[] | undefined>;
  /** Parsed form body (PAR, token) as ordered [name, value] pairs — duplicates preserved. */
  form?: Array<[string, string]>;
  /** Decoded client assertion, if one was sent. */
  clientAssertion?: DecodedJwt;
  /** Decoded DPoP proof(s), if a `DPoP` header was sent (more than one if the header was repeated). */
  dpop?: DecodedJwt[];
  /** RFC 7638 thumbprint of the DPoP proof key (first proof). */
  dpopJkt?: string;
  /** Response status the provider sent. */
  status?: number;
  /** OAuth `error` the provider answered with, if any. */
  error?: string;
  /** Human-readable reason for a rejection (why the provider refused the request). */
  reason?: string;
}

/** Control surface common to both providers. */
export interface LoginProvider extends SandboxService {
  /** Issuer identifier, e.g. `http://127.0.0.1:PORT/corppass`. */
  readonly issuer: string;
  registerClient(client: ClientRegistration): void;
  /** Merge switches into the active misbehaviour set (applies to subsequent responses). */
  misbehave(m: Misbehaviour): void;
  /** Clear all misbehaviour (keys, clients, users and the request log stay). */
  reset(): void;
  /** New signing key: tokens are signed with it from now on; the old one stays published until `retireOldKeys()`. */
  rotateKeys(): Promise<void>;
  /** Stop publishing all but the current signing key. */
  retireOldKeys(): void;
  /** Current signing kid. */
  currentKid(): string;
  /** A copy of the request log. */
  requests(): RecordedRequest[];
  /** Empty the request log. */
  clearRequests(): void;
}
