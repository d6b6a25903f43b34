// Type-aware lint of our own code: typescript-eslint's recommendedTypeChecked over src/, cli/, sandbox/, node-red/,
// nodes/ and credentials/ (tests and benches are left out), plus the house's boundaries (no-restricted-imports below), with the repo's TypeScript (the one the build uses). Run with
// `npm run lint` or `bash scripts/lint-core.sh`. eslint and typescript-eslint are dev dependencies (never installed
// into a user's n8n or Node-RED).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/**', 'bench/**', 'scripts/**', 'examples/**', 'flows/**'] },
  {
    files: ['src/**/*.ts', 'cli/**/*.ts', 'sandbox/**/*.ts', 'node-red/**/*.ts', 'nodes/**/*.ts', 'credentials/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Public async functions that never await still turn a throw into a rejection and keep a Promise API
      // (prepareSignature, appendDss, interface methods such as n8n's webhook checkExists): `async` is on purpose.
      '@typescript-eslint/require-await': 'off',
      // `const { secret: _s, ...rest } = x` is how a member is left out of a copy.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // Node-RED nodes are constructor functions that name `this` `node` for their handlers (Node-RED's own pattern).
      '@typescript-eslint/no-this-alias': ['error', { allowedNames: ['node'] }],
      // `ErrorCode | string` documents the codes expected where a stored or foreign string is also accepted.
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      // String(x ?? '') coerces untyped input (credential fields, JSON claims) on purpose; templates stay checked below.
      '@typescript-eslint/no-base-to-string': 'off',
      // A runtime guard that reports a value its type says is impossible (`${event.type}` narrowed to never).
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNever: true }],
    },
  },
  // Boundaries. The core knows the protocols and the session engine and nothing of the front ends, the sandbox or an
  // engine's API; the sandbox is a peer of the client (a mistake on one side must not hide in the other), so it shares
  // no code with it; the front ends are siblings over the core.
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/sandbox', '**/sandbox/**'], message: 'The core must not import the sandbox (it is the client\'s peer, not its helper).' },
        { group: ['**/nodes/**', '**/credentials/**', '**/node-red/**', '**/cli/**', '**/cli'], message: 'The core must not import a front end (n8n nodes, Node-RED nodes, the CLI).' },
        { group: ['n8n-workflow', 'n8n-core', 'node-red'], message: 'The core is engine-agnostic: no n8n or Node-RED API here.' },
      ] }],
    },
  },
  {
    files: ['sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/src', '**/src/**', '**/nodes/**', '**/node-red/**', '**/cli/**'], message: 'The sandbox shares no code with the client (wire tables, assertion builder, token verifier, CMS builder): a mistake on one side must not hide in the other.' },
      ] }],
    },
  },
  {
    files: ['nodes/**/*.ts', 'credentials/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/node-red/**', '**/cli/**', '**/sandbox', '**/sandbox/**'], message: 'The n8n nodes are a sibling front end: import the core (src/), not Node-RED, the CLI or the sandbox.' },
        { group: ['**/src/*/*'], message: 'Import a core area through its entry (src/sign, src/session, src/pades …), not one of its files: the entry is the area\'s public API.' },
      ] }],
    },
  },
  {
    files: ['node-red/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/nodes/**', '**/credentials/**', '**/cli/**', '**/sandbox', '**/sandbox/**', 'n8n-workflow'], message: 'The Node-RED nodes are a sibling front end: import the core (src/), not the n8n nodes, the CLI or the sandbox.' },
        { group: ['**/src/*/*'], message: 'Import a core area through its entry (src/sign, src/session, src/pades …), not one of its files: the entry is the area\'s public API.' },
      ] }],
    },
  },
  {
    files: ['cli/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['**/nodes/**', '**/credentials/**', '**/node-red/**', 'n8n-workflow', 'node-red'], message: 'The CLI is a sibling front end: import the core (src/) and the sandbox it runs, not the n8n or Node-RED nodes.' },
        { group: ['**/src/*/*'], message: 'Import a core area through its entry (src/sign, src/session, src/pades …), not one of its files: the entry is the area\'s public API.' },
      ] }],
    },
  },
);
