#!/usr/bin/env bash
# n8n's community-node lint (@n8n/node-cli's ESLint rules) over nodes/, credentials/ and package.json.
# @n8n/node-cli is installed once into a cache directory outside the repo (scripts/n8n-node-cli.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
DIR="$(bash scripts/n8n-node-cli.sh)"
N8N_NODE_CLI_DIR="$DIR" "$DIR/node_modules/.bin/eslint" -c eslint.n8n.config.mjs nodes credentials package.json
