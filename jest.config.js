// jose 6 and pkijs 4 are ESM-only. Node >= 20.19 can require() them at run time,
// but jest has its own module loader, so we let @swc/jest turn them (and our TypeScript) into CommonJS.
const esmOnly = ['@peculiar', 'jose', 'pkijs', 'asn1js', 'pvtsutils', 'pvutils', 'bytestreamjs', '@noble'];
const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: {
    '^.+\\.(t|j|mj)sx?$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
};
// Four projects (`npm test` runs them all in lanes, scripts/run-tests.js; each alone: `npm run test:unit`, `test:e2e`,
// `test:browser`, `test:n8n`):
// - n8n: every file that starts a real n8n (one process or queue mode), the heaviest; run one at a time;
// - browser: Debian chromium driven by playwright-core (*.browser.test.ts);
// - e2e: real engines and processes — Node-RED, the demo, the CLI as a child process — and whole signing sessions over
//   HTTP against the sandbox (*.e2e.test.ts);
// - unit: everything else — one module against its inputs, sandbox servers on loopback included; fast.
const E2E_DIRS = ['n8n', 'node-red', 'demo', 'cli'].map((d) => `<rootDir>/test/${d}/`);
const N8N = ['<rootDir>/test/n8n/**/*.{e2e,browser}.test.ts', '<rootDir>/test/conformance/n8n*.e2e.test.ts'];
const N8N_IGNORE = ['/test/n8n/[^/]+\\.(e2e|browser)\\.test\\.ts$', '/test/conformance/n8n[^/]*\\.e2e\\.test\\.ts$'];
module.exports = {
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['\\.e2e\\.test\\.ts$', '\\.browser\\.test\\.ts$', ...E2E_DIRS] },
    { ...common, displayName: 'e2e', testMatch: ['**/*.e2e.test.ts', ...E2E_DIRS.map((d) => `${d}**/*.test.ts`)], testPathIgnorePatterns: ['\\.browser\\.test\\.ts$', ...N8N_IGNORE] },
    { ...common, displayName: 'browser', testMatch: ['**/*.browser.test.ts'], testPathIgnorePatterns: N8N_IGNORE },
    { ...common, displayName: 'n8n', testMatch: N8N },
  ],
};
