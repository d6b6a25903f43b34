#!/usr/bin/env node
// Copies what tsc does not: the Node-RED editor files (*.html, beside the compiled runtime .js of the same name, where
// Node-RED looks for them) and the palette icons (node-red/icons → dist/node-red/icons).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
let copied = 0;
function walk(rel) {
  for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const child = path.join(rel, entry.name);
    if (entry.isDirectory()) walk(child);
    else if (/\.(html|svg|png)$/.test(entry.name)) {
      const to = path.join(root, 'dist', child);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(path.join(root, child), to);
      copied++;
    }
  }
}
walk('node-red');
console.log(`node-red assets: ${copied} files copied into dist`);
