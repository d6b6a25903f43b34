#!/usr/bin/env bash
# Regenerates docs/n8n-nodes.png (the screenshot in docs/n8n.md): the n8n end-to-end test opens the editor of a real
# n8n with this package installed in headless Chromium, checks the nodes and their icons, and saves the image.
# Needs scripts/install-n8n.sh (n8n, Node 24, chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs
SINGPASS_FLOWS_SCREENSHOT="$PWD/docs/n8n-nodes.png" npx jest test/n8n/n8n.e2e --maxWorkers=1 -t 'editor in headless Chromium'
ls -l docs/n8n-nodes.png
