import { SingpassFlowsError } from '../errors';
import { httpRequest, parseJsonBody, safeUrl, type Fetch } from '../http';
import { systemClock, type Clock } from '../clock';
import type { KeySource } from '../keys';
import { ProviderKeySet, type ProviderKeySetOptions } from './provider-keys';
import { cacheLifetimeSeconds, type ProviderIo } from './util';
import { AUTHORIZATION_INFO_ENDPOINT_KEYS, CORPPASS_AUTHORIZATION_SCOPES, CORPPASS_FAPI_ID_TOKEN_SCOPES, SINGPASS_ID_TOKEN_SCOPES } from './wire';
import { requireHttpsUrl } from '../http';
import { responseIssRequired, type ResponseIssRule } from './response-iss';

/** The provider metadata members this package uses, validated. */
export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  /** FAPI profiles only. */
  parEndpoint?: string;
  /** FAPI userinfo (Corppass FAPI: also the authorization info). */
  userinfoEndpoint?: string;
  /** Corppass authorization info (`authorization-info_endpoint`). */
  authorizationInfoEndpoint?: string;
  /** Callbacks must carry `iss` (RFC 9207): the profile requires it or discovery advertises it (response-iss.ts). */
  responseIssRequired: boolean;
  raw: Record<string, unknown>;
}

export type ProviderProfile = 'corppass' | 'corppass-fapi' | 'singpass-fapi';

/**
 * Whether a scope's data is released at the profile's data endpoint (Singpass userinfo, Corppass authorization info)
 * rather than in the ID token: that endpoint is called, and required in discovery, only for such scopes.
 */
export const RELEASED_AT_DATA_ENDPOINT: Record<ProviderProfile, (scope: string) => boolean> = {
  'singpass-fapi': (s) => !(SINGPASS_ID_TOKEN_SCOPES as readonly string[]).includes(s),
  corppass: (s) => (CORPPASS_AUTHORIZATION_SCOPES as readonly string[]).includes(s),
  // Corppass FAPI: roles (authinfo, tpauthinfo) and Myinfo Business data are at userinfo; the rest is in the ID token.
  'corppass-fapi': (s) => s !== 'openid' && !(CORPPASS_FAPI_ID_TOKEN_SCOPES as readonly string[]).includes(s),
};

/** True when one of the space-separated `scope` values is released at the profile's data endpoint. */
export function scopeNeedsDataEndpoint(scope: string, profile: ProviderProfile): boolean {
  return scope.split(' ').filter(Boolean).some(RELEASED_AT_DATA_ENDPOINT[profile]);
}

/**
 * The data endpoint for `scope`, or undefined when the scope releases nothing there. A needed endpoint missing from
 * discovery is DISCOVERY_INVALID (checked before the login starts, so the user is not sent to log in for nothing).
 */
export function dataEndpointFor(md: ProviderMetadata, profile: ProviderProfile, scope: string, force = false): string | undefined {
  if (!force && !scopeNeedsDataEndpoint(scope, profile)) return undefined;
  const url = profile === 'corppass' ? md.authorizationInfoEndpoint : md.userinfoEndpoint;
  if (!url) {
    const member = profile === 'corppass' ? 'authorization-info_endpoint' : 'userinfo_endpoint';
    throw new SingpassFlowsError('DISCOVERY_INVALID', `Provider configuration of ${md.issuer}: "${member}" is missing, ${force ? 'and this call asks for it' : `and the scope "${scope}" releases data only there`}`);
  }
  return url;
}

/** How each profile treats `iss` in authorization responses (see response-iss.ts). */
export const RESPONSE_ISS_RULE: Record<ProviderProfile, ResponseIssRule> = {
  // FAPI 2.0 requires it and Singpass sends it on every redirect (since 11 June 2026).
  'singpass-fapi': 'required',
  // Corppass publishes the flag false and sends no `iss` today: follow its discovery.
  corppass: 'as-advertised',
  // Corppass FAPI adds `iss` "at a later date": follow its discovery until then.
  'corppass-fapi': 'as-advertised',
};

interface CacheEntry { raw: Record<string, unknown>; expiresAt: number }

export interface ProviderCacheOptions extends ProviderKeySetOptions {
  /** HTTP function, clock and timeout used when a call does not bring its own (each client passes its own). */
  fetch?: Fetch;
  clock?: Clock;
  timeoutMs?: number;
}

/**
 * Discovery documents and key sets, cached as the services require (≥ 1 h) and shared by every client that uses
 * this cache — by default one per process, whatever HTTP function each client passes (its own function performs
 * the fetches it triggers). Workflow engines build a client per execution: with this sharing a login costs only
 * the protocol's own requests. Keyed by issuer (discovery) and key-set URL.
 */
export class ProviderCache {
  private readonly discovery = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<Record<string, unknown>>>();
  private readonly keySets = new Map<string, ProviderKeySet>();
  /** Discovery fetches made (tests and metrics). */
  discoveryFetches = 0;

  constructor(readonly options: ProviderCacheOptions = {}) {}

  /** Validated metadata for `issuer`, from cache while fresh. */
  async metadata(issuer: string, profile: ProviderProfile, allowInsecureLoopback: boolean, io: ProviderIo = {}): Promise<ProviderMetadata> {
    const hit = this.discovery.get(issuer);
    const raw = hit && this.io(io).clock() < hit.expiresAt ? hit.raw : await this.fetchShared(issuer, io, false);
    try {
      return validateMetadata(raw, issuer, profile, allowInsecureLoopback);
    } catch (e) {
      // A document this profile cannot use is not kept: the next login fetches again (same error while it stays broken).
      if (this.discovery.get(issuer)?.raw === raw) this.discovery.delete(issuer);
      throw e;
    }
  }

  /** The key set at `jwksUri`, as the calls `verifyJwsWithKeySet` makes with this caller's HTTP function. */
  keySet(jwksUri: string, io: ProviderIo = {}): KeySource {
    return this.keySetEntry(jwksUri).view(this.io(io));
  }

  /**
   * Fetch the provider's discovery document and key set now, bypassing the cache (e.g. after the provider
   * announced a key rotation). On failure the cached copies stay and the error is thrown.
   */
  async refresh(issuer: string, profile: ProviderProfile, allowInsecureLoopback: boolean, io: ProviderIo = {}): Promise<ProviderMetadata> {
    const md = validateMetadata(await this.fetchShared(issuer, io, true), issuer, profile, allowInsecureLoopback);
    await this.keySetEntry(md.jwksUri).reload(this.io(io));
    return md;
  }

  /** Forget everything (tests, or a process that changes providers). */
  clear(): void {
    this.discovery.clear();
    this.keySets.clear();
  }

  /** Key-set fetches made for `jwksUri` (tests and metrics). */
  keySetFetches(jwksUri: string): number {
    return this.keySets.get(jwksUri)?.fetchCount ?? 0;
  }

  private keySetEntry(jwksUri: string): ProviderKeySet {
    let set = this.keySets.get(jwksUri);
    if (!set) {
      set = new ProviderKeySet(jwksUri, this.options);
      this.keySets.set(jwksUri, set);
    }
    return set;
  }

  private io(io: ProviderIo): Required<Pick<ProviderIo, 'clock'>> & ProviderIo {
    return { fetch: io.fetch ?? this.options.fetch, clock: io.clock ?? this.options.clock ?? systemClock, timeoutMs: io.timeoutMs ?? this.options.timeoutMs };
  }

  /** Concurrent callers share one fetch per issuer (a forced refresh starts its own). */
  private fetchShared(issuer: string, io: ProviderIo, force: boolean): Promise<Record<string, unknown>> {
    let pending = force ? undefined : this.inflight.get(issuer);
    if (!pending) {
      const run = this.fetchDocument(issuer, this.io(io)).finally(() => {
        if (this.inflight.get(issuer) === run) this.inflight.delete(issuer);
      });
      this.inflight.set(issuer, run);
      pending = run;
    }
    return pending;
  }

  private async fetchDocument(issuer: string, io: ProviderIo & { clock: Clock }): Promise<Record<string, unknown>> {
    const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    this.discoveryFetches++;
    const started = io.clock();
    const res = await httpRequest(url, { headers: { accept: 'application/json' } }, { fetch: io.fetch, timeoutMs: io.timeoutMs }).catch((e: unknown) => {
      throw new SingpassFlowsError('DISCOVERY_FAILED', `Cannot read the provider configuration at ${safeUrl(url)}: ${(e as Error).message}`, { retryable: true }, { cause: e });
    });
    if (res.status !== 200) {
      throw new SingpassFlowsError('DISCOVERY_FAILED', `The provider configuration at ${safeUrl(url)} answered HTTP ${res.status}`, { status: res.status, retryable: res.status >= 500 });
    }
    let body: unknown;
    try {
      body = parseJsonBody(res, 'The provider configuration');
    } catch (e) {
      throw new SingpassFlowsError('DISCOVERY_INVALID', (e as Error).message, { status: res.status });
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new SingpassFlowsError('DISCOVERY_INVALID', `Provider configuration of ${issuer}: is not a JSON object`);
    const raw = body as Record<string, unknown>;
    this.discovery.set(issuer, { raw, expiresAt: started + cacheLifetimeSeconds(res, this.options.minCacheSeconds ?? 3600) * 1000 });
    return raw;
  }
}

/** Shared by every client that is not given its own cache (the normal case in n8n and Node-RED). */
export const defaultProviderCache = new ProviderCache();

/**
 * Fail closed at configuration time on metadata we cannot trust or that lacks what the secure flow needs (RFC 8414
 * §3.3 issuer identity, RFC 9207 iss parameter where the profile requires it, PKCE S256, PAR and DPoP for FAPI, https endpoints).
 */
export function validateMetadata(body: unknown, issuer: string, profile: ProviderProfile, allowInsecureLoopback: boolean): ProviderMetadata {
  const bad = (msg: string) => new SingpassFlowsError('DISCOVERY_INVALID', `Provider configuration of ${issuer}: ${msg}`);
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw bad('is not a JSON object');
  const raw = body as Record<string, unknown>;
  if (raw.issuer !== issuer) throw bad(`names issuer "${String(raw.issuer)}", expected exactly "${issuer}" (wrong issuer URL configured, or a mix-up)`);
  const endpoint = (name: string, required: boolean): string | undefined => {
    const v = raw[name];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string') throw bad(v === undefined ? `"${name}" is missing` : `"${name}" is not a URL string`);
    try {
      requireHttpsUrl(name, v, { allowLoopbackHttp: allowInsecureLoopback });
    } catch {
      throw bad(`"${name}" (${safeUrl(v)}) is not an https URL`);
    }
    return v;
  };
  const includes = (name: string, value: string) => Array.isArray(raw[name]) && (raw[name] as unknown[]).includes(value);
  if (!includes('code_challenge_methods_supported', 'S256')) throw bad('does not list S256 in code_challenge_methods_supported (PKCE is required)');
  const md: ProviderMetadata = {
    issuer,
    authorizationEndpoint: endpoint('authorization_endpoint', true)!,
    tokenEndpoint: endpoint('token_endpoint', true)!,
    jwksUri: endpoint('jwks_uri', true)!,
    responseIssRequired: responseIssRequired(raw, RESPONSE_ISS_RULE[profile], bad),
    raw,
  };
  if (profile === 'singpass-fapi' || profile === 'corppass-fapi') {
    md.parEndpoint = endpoint('pushed_authorization_request_endpoint', true);
    // Optional: only person-data scopes need it (checked when such a scope is requested, dataEndpointFor).
    md.userinfoEndpoint = endpoint('userinfo_endpoint', false);
    if (!includes('dpop_signing_alg_values_supported', 'ES256')) throw bad('does not list ES256 in dpop_signing_alg_values_supported (DPoP is required)');
  } else {
    for (const name of AUTHORIZATION_INFO_ENDPOINT_KEYS) {
      if (raw[name] !== undefined) {
        md.authorizationInfoEndpoint = endpoint(name, true);
        break;
      }
    }
  }
  return md;
}
