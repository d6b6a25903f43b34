// Lint of the Node-RED examples' sources (scripts/node-red-examples/, turned into examples/*.json by
// scripts/make-node-red-examples.js), with eslint:recommended. Run by `bash scripts/lint-core.sh`.
// - functions/*.js are function-node BODIES: Node-RED runs each inside a function of `msg`, so a top-level `return` is
//   the node's output, and `node`, `flow`, `global`, `context`, `env`, `RED` are given; not strict mode, not a module.
// - pages/*.html: the browser script inside <script> elements, through the small processor below (eslint-plugin-html
//   is not a dependency of ours). The Mustache pages hold no script; a {{tag}} inside one would not parse.
// - the generator itself, a CommonJS Node script.
import { createRequire } from 'node:module';

// @eslint/js (the rules behind "eslint:recommended") is eslint's own dependency: resolve it from eslint's folder.
const fromEslint = createRequire(createRequire(import.meta.url).resolve('eslint/package.json'));
const js = fromEslint('@eslint/js');

const readonly = (names) => Object.fromEntries(names.map((name) => [name, 'readonly']));

// The pages' inline scripts, as one JavaScript block per page: everything outside <script>…</script> becomes spaces
// (line breaks kept), so a finding's line and column are the page's own.
const htmlScripts = {
  meta: { name: 'html-inline-scripts' },
  preprocess(text) {
    const blank = (s) => s.replace(/[^\n]/g, ' ');
    let code = '';
    let rest = text;
    for (let m; (m = /(<script\b[^>]*>)([\s\S]*?)(<\/script>)/i.exec(rest)); rest = rest.slice(m.index + m[0].length)) {
      code += blank(rest.slice(0, m.index) + m[1]) + m[2] + blank(m[3]);
    }
    return [{ text: code + blank(rest), filename: 'inline.js' }];
  },
  postprocess: (messages) => messages.flat(),
  supportsAutofix: false,
};

export default [
  js.configs.recommended,
  {
    files: ['scripts/node-red-examples/functions/**/*.js'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'script',
      parserOptions: { ecmaFeatures: { globalReturn: true } },
      globals: readonly(['msg', 'node', 'flow', 'global', 'context', 'env', 'RED', 'console', 'util', 'Buffer',
        'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval']),
    },
  },
  {
    // The generator puts `const SAMPLES = [...]` (its one list of the sample documents) before these two bodies.
    files: ['scripts/node-red-examples/functions/sample-list.js', 'scripts/node-red-examples/functions/sample-path.js'],
    languageOptions: { globals: readonly(['SAMPLES']) },
  },
  {
    // The generator puts `const SIGNERS = [...]` (who signs, in order) before these two bodies.
    files: ['scripts/node-red-examples/functions/first-signer.js', 'scripts/node-red-examples/functions/next-signer.js'],
    languageOptions: { globals: readonly(['SIGNERS']) },
  },
  {
    files: ['scripts/node-red-examples/pages/*.html'],
    plugins: { examples: { processors: { 'html-inline-scripts': htmlScripts } } },
    processor: 'examples/html-inline-scripts',
  },
  {
    files: ['scripts/node-red-examples/pages/*.html/*.js'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'script',
      globals: readonly(['window', 'document', 'location', 'fetch', 'console', 'setTimeout', 'clearTimeout',
        'setInterval', 'clearInterval']),
    },
  },
  {
    files: ['scripts/make-node-red-examples.js'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'commonjs',
      globals: readonly(['require', 'module', '__dirname', 'process', 'console']),
    },
  },
];
