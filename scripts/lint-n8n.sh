#!/usr/bin/env bash
# n8n's community-node lint (@n8n/node-cli's ESLint rules) over nodes/, credentials/ and package.json.
# @n8n/node-cli is installed once into a cache directory outside the repo, with --ignore-scripts (on Node 20 its
# install scripts fail; the lint itself runs fine).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=0.48.3
DIR="${SINGPASS_FLOWS_NODE_CLI_DIR:-$HOME/.cache/singpass-flows/n8n-node-cli-$VERSION}"
if [ ! -x "$DIR/node_modules/.bin/eslint" ] || [ ! -d "$DIR/node_modules/@n8n/node-cli" ]; then
  mkdir -p "$DIR"
  [ -f "$DIR/package.json" ] || echo '{"private":true}' > "$DIR/package.json"
  (cd "$DIR" && npm install --no-audit --no-fund --ignore-scripts "@n8n/node-cli@$VERSION" >&2)
fi
N8N_NODE_CLI_DIR="$DIR" "$DIR/node_modules/.bin/eslint" -c eslint.n8n.config.mjs nodes credentials package.json
