// jose 6 and pkijs 4 are ESM-only. Node >= 20.19 can require() them at run time,
// but jest has its own module loader, so we let @swc/jest turn them (and our TypeScript) into CommonJS.
const esmOnly = ['@peculiar', 'jose', 'pkijs', 'asn1js', 'pvtsutils', 'pvutils', 'bytestreamjs', '@noble'];
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)sx?$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/scripts/jest-summary-reporter.js'],
};
