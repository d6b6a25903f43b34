import { SingpassFlowsError } from '../errors';
import { httpRequest, parseJsonBody, safeUrl, type Fetch } from '../http';
import { systemClock, type Clock } from '../clock';
import { RemoteKeySet } from '../keys';
import { AUTHORIZATION_INFO_ENDPOINT_KEYS } from './wire';
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

/** How each profile treats `iss` in authorization responses (see response-iss.ts). */
export const RESPONSE_ISS_RULE: Record<ProviderProfile, ResponseIssRule> = {
  // FAPI 2.0 requires it and Singpass sends it on every redirect (since 11 June 2026).
  'singpass-fapi': 'required',
  // Corppass publishes the flag false and sends no `iss` today: follow its discovery.
  corppass: 'as-advertised',
  // Corppass FAPI adds `iss` "at a later date": follow its discovery until then.
  'corppass-fapi': 'as-advertised',
};

interface CacheEntry { metadata: ProviderMetadata; expiresAt: number }

/**
 * Discovery documents and key sets, cached as the services require (≥ 1 h) and shared by every client built with
 * the same cache — so clients re-created per workflow run do not refetch them on every login.
 */
export class ProviderCache {
  private readonly discovery = new Map<string, CacheEntry>();
  private readonly inflight = new Map<string, Promise<ProviderMetadata>>();
  private readonly keySets = new Map<string, RemoteKeySet>();
  /** Discovery fetches made (tests and metrics). */
  discoveryFetches = 0;

  constructor(readonly options: { fetch?: Fetch; clock?: Clock; minCacheSeconds?: number; timeoutMs?: number } = {}) {}

  /** Validated metadata for `issuer`, from cache while fresh. */
  async metadata(issuer: string, profile: ProviderProfile, allowInsecureLoopback: boolean): Promise<ProviderMetadata> {
    const clock = this.options.clock ?? systemClock;
    const key = `${profile} ${issuer}`;
    const hit = this.discovery.get(key);
    if (hit && clock() < hit.expiresAt) return hit.metadata;
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetchMetadata(issuer, profile, allowInsecureLoopback).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  keySet(jwksUri: string): RemoteKeySet {
    let set = this.keySets.get(jwksUri);
    if (!set) {
      set = new RemoteKeySet(jwksUri, { fetch: this.options.fetch, clock: this.options.clock, minCacheSeconds: this.options.minCacheSeconds, timeoutMs: this.options.timeoutMs });
      this.keySets.set(jwksUri, set);
    }
    return set;
  }

  private async fetchMetadata(issuer: string, profile: ProviderProfile, allowInsecureLoopback: boolean): Promise<ProviderMetadata> {
    const clock = this.options.clock ?? systemClock;
    const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    this.discoveryFetches++;
    const res = await httpRequest(url, { headers: { accept: 'application/json' } }, { fetch: this.options.fetch, timeoutMs: this.options.timeoutMs }).catch((e: unknown) => {
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
    const metadata = validateMetadata(body, issuer, profile, allowInsecureLoopback);
    const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(res.headers.get('cache-control') ?? '');
    const seconds = Math.min(Math.max(maxAge ? Number(maxAge[1]) : 0, this.options.minCacheSeconds ?? 3600), 24 * 3600);
    this.discovery.set(`${profile} ${issuer}`, { metadata, expiresAt: clock() + seconds * 1000 });
    return metadata;
  }
}

/** Shared by clients created with the default fetch (the normal case in n8n and Node-RED). */
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
    if (typeof v !== 'string') throw bad(`"${name}" is missing`);
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
    // Corppass FAPI calls userinfo only when a requested scope releases data there (checked then).
    md.userinfoEndpoint = endpoint('userinfo_endpoint', profile === 'singpass-fapi');
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
