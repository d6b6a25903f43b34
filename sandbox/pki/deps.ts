import type * as Pkijs from 'pkijs' with { 'resolution-mode': 'import' };
import type * as Asn1js from 'asn1js' with { 'resolution-mode': 'import' };

/** pkijs + asn1js namespaces, loaded once. */
export interface Asn1Libs {
  pkijs: typeof Pkijs;
  asn1js: typeof Asn1js;
}

let loading: Promise<Asn1Libs> | undefined;

/**
 * pkijs and asn1js are ESM-only while this package compiles to CommonJS: a dynamic import() works both under Node
 * (>= 20.19) and under jest (which rewrites it to require of the transformed module). pkijs picks up Node's global
 * WebCrypto on its own.
 */
export function loadAsn1(): Promise<Asn1Libs> {
  loading ??= Promise.all([import('pkijs'), import('asn1js')]).then(([pkijs, asn1js]) => ({ pkijs, asn1js }));
  return loading;
}

export type { Pkijs, Asn1js };
