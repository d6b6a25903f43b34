// Type-aware lint of our own code: typescript-eslint's recommendedTypeChecked over src/, sandbox/, node-red/, nodes/
// and credentials/ (tests and benches are left out), with the repo's TypeScript (the one the build uses). Run with
// `npm run lint` or `bash scripts/lint-core.sh`. eslint and typescript-eslint are dev dependencies (never installed
// into a user's n8n or Node-RED).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/**', 'bench/**', 'scripts/**', 'examples/**', 'flows/**'] },
  {
    files: ['src/**/*.ts', 'sandbox/**/*.ts', 'node-red/**/*.ts', 'nodes/**/*.ts', 'credentials/**/*.ts'],
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
);
