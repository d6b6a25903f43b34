/**
 * Key-management algorithms of the JWEs the login services send us (ID tokens, userinfo), for our EC encryption
 * keys: ECDH-ES with AES key wrap. Plain ECDH-ES (direct key agreement) is refused. Kept here, where keys are
 * loaded, so loading a key does not depend on the login code; the login wire table re-exports it.
 */
export const JWE_KEY_ALGS = ['ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'] as const;
