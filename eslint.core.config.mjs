// Type-aware lint of our own code: typescript-eslint's recommendedTypeChecked over src/, sandbox/, node-red/, nodes/
// and credentials/ (tests and benches are left out). Run with `bash scripts/lint-core.sh` (or `npm run lint`): it
// reuses the @n8n/node-cli install outside the repo (scripts/n8n-node-cli.sh), which already holds eslint and
// typescript-eslint, and points N8N_NODE_CLI_DIR at it.
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';

// Type-check with the repo's TypeScript (the one `tsc` builds with), not the older copy in the @n8n/node-cli
// install: their lib types differ (TS 5.9: a SharedArrayBuffer is no longer an ArrayBuffer), and the lint must agree
// with the build. typescript-eslint require()s "typescript" (and typescript/lib/tsserverlibrary) from its own folder,
// so that one package name is redirected to the repo's node_modules.
const repoTypescript = dirname(createRequire(import.meta.url).resolve('typescript/package.json'));
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const redirected = /^typescript(\/|$)/.test(request) ? repoTypescript + request.slice('typescript'.length) : request;
  return resolveFilename.call(this, redirected, ...rest);
};

const require = createRequire(`${process.env.N8N_NODE_CLI_DIR}/`);
const tseslint = require('typescript-eslint');

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/**', 'bench/**', 'scripts/**', 'examples/**', 'flows/**'] },
  {
    files: ['src/**/*.ts', 'sandbox/**/*.ts', 'node-red/**/*.ts', 'nodes/**/*.ts', 'credentials/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
        // typescript-eslint 8.35 names TS < 5.9 as supported; 5.9 works (checked: the same findings bar the lib change above).
        warnOnUnsupportedTypeScriptVersion: false,
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
