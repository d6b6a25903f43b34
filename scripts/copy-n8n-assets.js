#!/usr/bin/env node
// Copies what tsc does not: the n8n nodes' and credentials' icons (SVG) and codex files (*.node.json) into dist,
// beside the compiled files that reference them (`icon: 'file:x.svg'` resolves relative to the compiled file).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
let copied = 0;
function walk(rel) {
  const dir = path.join(root, rel);
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (entry.isDirectory()) walk(child);
    else if (/\.(svg|png)$|\.node\.json$/.test(entry.name)) {
      const to = path.join(root, 'dist', child);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(path.join(root, child), to);
      copied++;
    }
  }
}
walk('nodes');
walk('credentials');
console.log(`n8n assets: ${copied} files copied into dist`);
