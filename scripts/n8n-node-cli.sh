#!/usr/bin/env bash
# Prints the folder of the @n8n/node-cli install the lints use (scripts/lint-n8n.sh, scripts/lint-core.sh),
# installing it first if needed. It lives in a cache directory outside the repo, installed with --ignore-scripts (on
# Node 20 its install scripts fail; the lint itself runs fine). It also holds eslint and typescript-eslint.
set -euo pipefail
VERSION=0.48.3
DIR="${SINGPASS_FLOWS_NODE_CLI_DIR:-$HOME/.cache/singpass-flows/n8n-node-cli-$VERSION}"
if [ ! -x "$DIR/node_modules/.bin/eslint" ] || [ ! -d "$DIR/node_modules/@n8n/node-cli" ] || [ ! -d "$DIR/node_modules/typescript-eslint" ]; then
  mkdir -p "$DIR"
  [ -f "$DIR/package.json" ] || echo '{"private":true}' > "$DIR/package.json"
  (cd "$DIR" && npm install --no-audit --no-fund --ignore-scripts "@n8n/node-cli@$VERSION" >&2)
fi
echo "$DIR"
