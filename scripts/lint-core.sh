#!/usr/bin/env bash
# Type-aware lint of our own code (typescript-eslint recommendedTypeChecked, eslint.core.config.mjs) over src/, cli/,
# sandbox/, node-red/, nodes/ and credentials/; first, eslint:recommended over the Node-RED examples' sources
# (eslint.examples.config.mjs: the function-node bodies, the pages' inline scripts and their generator).
# Extra arguments go to both eslint runs (e.g. --fix).
set -euo pipefail
cd "$(dirname "$0")/.."
node_modules/.bin/eslint -c eslint.examples.config.mjs "$@" scripts/node-red-examples scripts/make-node-red-examples.js
exec node_modules/.bin/eslint -c eslint.core.config.mjs "$@" src cli sandbox node-red nodes credentials
