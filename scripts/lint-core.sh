#!/usr/bin/env bash
# Type-aware lint of our own code (typescript-eslint recommendedTypeChecked, eslint.core.config.mjs) over src/, cli/,
# sandbox/, node-red/, nodes/ and credentials/. Extra arguments go to eslint (e.g. --fix, -f json).
set -euo pipefail
cd "$(dirname "$0")/.."
exec node_modules/.bin/eslint -c eslint.core.config.mjs "$@" src cli sandbox node-red nodes credentials
