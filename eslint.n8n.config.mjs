// n8n's community-node lint rules, scoped to the n8n adapter (nodes/, credentials/) and package.json.
// Run with `bash scripts/lint-n8n.sh`: it installs @n8n/node-cli outside the repo (≈ 700 MB) and points
// N8N_NODE_CLI_DIR at it. "Without cloud support": this package has runtime dependencies, so it is an unverified
// community node (see docs/n8n.md), and the verified-only rules do not apply.
import { createRequire } from 'node:module';

const require = createRequire(`${process.env.N8N_NODE_CLI_DIR}/`);
const { configWithoutCloudSupport } = require('@n8n/node-cli/eslint');

export default [
  ...configWithoutCloudSupport,
  {
    files: ['package.json'],
    rules: {
      // The one rule this package breaks by design: jose, pkijs/asn1js, pdf-lib and qrcode are runtime dependencies
      // (JOSE, CMS/OCSP/RFC 3161 and PDF work cannot be bundled away sensibly). Hence "unverified community node".
      '@n8n/community-nodes/no-runtime-dependencies': 'off',
      // A false positive: the Node-RED node map's key "singpass-keyset" (a node id) is read as a key name, and its
      // value (a dist/ path) as the secret. package.json holds no secrets; the rule stays on for nodes/ and credentials/.
      '@n8n/community-nodes/no-hardcoded-secrets': 'off',
    },
  },
];
