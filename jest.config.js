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
// Three projects (`npm run test:unit`, `test:e2e`, `test:browser`; `npm test` runs all):
// - browser: Debian chromium driven by playwright-core (*.browser.test.ts);
// - e2e: real engines and processes — n8n, Node-RED, the demo, the CLI as a child process — and whole signing
//   sessions over HTTP against the sandbox (*.e2e.test.ts);
// - unit: everything else — one module against its inputs, sandbox servers on loopback included; fast.
const E2E_DIRS = ['n8n', 'node-red', 'demo', 'cli'].map((d) => `<rootDir>/test/${d}/`);
module.exports = {
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['\\.e2e\\.test\\.ts$', '\\.browser\\.test\\.ts$', ...E2E_DIRS] },
    { ...common, displayName: 'e2e', testMatch: ['**/*.e2e.test.ts', ...E2E_DIRS.map((d) => `${d}**/*.test.ts`)], testPathIgnorePatterns: ['\\.browser\\.test\\.ts$'] },
    { ...common, displayName: 'browser', testMatch: ['**/*.browser.test.ts'] },
  ],
};
