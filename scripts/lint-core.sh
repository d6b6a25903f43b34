#!/usr/bin/env bash
# Type-aware lint of our own code (typescript-eslint recommendedTypeChecked, eslint.core.config.mjs) over src/,
# sandbox/, node-red/, nodes/ and credentials/. Reuses the @n8n/node-cli install of scripts/lint-n8n.sh (outside the
# repo, scripts/n8n-node-cli.sh), which holds eslint and typescript-eslint: no dev dependency in package.json.
# Extra arguments go to eslint (e.g. --fix, -f json).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="$(bash scripts/n8n-node-cli.sh)"
N8N_NODE_CLI_DIR="$DIR" "$DIR/node_modules/.bin/eslint" -c eslint.core.config.mjs "$@" src sandbox node-red nodes credentials
