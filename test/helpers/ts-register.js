// `node -r ./test/helpers/ts-register.js` : require() of this repository's TypeScript in a child process (tests that
// need several real processes, e.g. the file store's lock across processes). @swc/core, as jest uses it.
const fs = require('node:fs');
const path = require('node:path');
const swc = require(require.resolve('@swc/core', { paths: [path.resolve(__dirname, '../..')] }));
require.extensions['.ts'] = (m, filename) => {
  const { code } = swc.transformSync(fs.readFileSync(filename, 'utf8'), {
    filename, jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' },
  });
  m._compile(code, filename);
};
