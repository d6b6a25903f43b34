import * as crypto from 'node:crypto';
import type { JWK } from 'jose';

/** One of the service's webhook signing keys. */
export interface ServiceKey {
  kid: string;
  privateKey: crypto.KeyObject;
  publicJwk: JWK;
  createdAt: number;
  /** When set, the key is no longer used to sign and disappears from the key set at this time (ms). */
  retireAt?: number;
}

/** Serializable form, so a sandbox started with `dir` keeps its keys (DSAPs cache key sets for an hour). */
export interface ServiceKeyState {
  kid: string;
  privateJwk: JWK;
  createdAt: number;
  retireAt?: number;
}

/**
 * The service's rotating ES256 key ring. The newest key signs; after `rotate()` the previous keys stay published for
 * `graceMs` so tokens already issued (and DSAP caches) keep verifying, as the spec's "keys are rotated at any time"
 * implies.
 */
export class ServiceKeyRing {
  private keys: ServiceKey[] = [];

  constructor(
    private readonly clock: () => number,
    private readonly graceMs: number,
    state?: ServiceKeyState[],
  ) {
    for (const s of state ?? []) {
      const privateKey = crypto.createPrivateKey({ key: s.privateJwk as crypto.JsonWebKey, format: 'jwk' });
      this.keys.push({ kid: s.kid, privateKey, publicJwk: publicOf(privateKey, s.kid), createdAt: s.createdAt, retireAt: s.retireAt });
    }
    if (!this.current()) this.rotate();
  }

  /** The key that signs new tokens. */
  current(): ServiceKey {
    return this.keys.filter((k) => k.retireAt === undefined).at(-1) as ServiceKey;
  }

  /** Add a new signing key (new kid); previous keys are published until `now + graceMs`. Returns the new kid. */
  rotate(): string {
    const now = this.clock();
    for (const k of this.keys) if (k.retireAt === undefined) k.retireAt = now + this.graceMs;
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const kid = crypto.randomBytes(12).toString('base64url');
    this.keys.push({ kid, privateKey, publicJwk: publicOf(privateKey, kid), createdAt: now });
    return kid;
  }

  /** Drop every key except the current one at once (end of grace period). */
  retireOld(): void {
    const cur = this.current();
    this.keys = [cur];
  }

  /** Published keys (current + within grace), in random order as the real service does. */
  published(): JWK[] {
    const now = this.clock();
    this.keys = this.keys.filter((k) => k.retireAt === undefined || k.retireAt > now);
    const list = this.keys.map((k) => ({ ...k.publicJwk }));
    for (let i = list.length - 1; i > 0; i--) {
      const j = crypto.randomInt(i + 1);
      [list[i], list[j]] = [list[j], list[i]];
    }
    return list;
  }

  toState(): ServiceKeyState[] {
    return this.keys.map((k) => ({
      kid: k.kid,
      privateJwk: k.privateKey.export({ format: 'jwk' }),
      createdAt: k.createdAt,
      retireAt: k.retireAt,
    }));
  }
}

function publicOf(privateKey: crypto.KeyObject, kid: string): JWK {
  const { kty, crv, x, y } = crypto.createPublicKey(privateKey).export({ format: 'jwk' });
  return { kty, crv, x, y, kid, use: 'sig', alg: 'ES256' };
}
