#!/usr/bin/env node
// The npm registry reachable here lacks some platform-specific optional binaries (e.g. @swc/core-darwin-arm64,
// @unrs/resolver-binding-*). npm skips them at install, so package-lock.json never lists them, and `npm ci` then
// refuses the lock ("Missing: … from lock file"). This adds the missing optional entries with the os/cpu their
// names state, so npm ci skips them by platform exactly as it would with the full registry. Run after changing deps.
const fs = require('node:fs');
const lockPath = require('node:path').join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const pkgs = lock.packages;
const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'wasm32'];
let added = 0;
for (const [where, meta] of Object.entries(pkgs)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const parentDir = where ? `${where}/node_modules/${name}` : `node_modules/${name}`;
    if (pkgs[parentDir] || pkgs[`node_modules/${name}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = parts.find((p) => OS.includes(p));
    const cpu = parts.find((p) => CPU.includes(p)) ?? (parts.includes('arm') ? 'arm' : undefined);
    if (!os && !cpu) {
      console.error(`cannot tell the platform of ${name}; add it to the lock by hand`);
      process.exitCode = 1;
      continue;
    }
    pkgs[`node_modules/${name}`] = { version: String(version).replace(/^[~^]/, ''), ...(meta.dev ? { dev: true } : {}), optional: true, ...(os ? { os: [os] } : {}), ...(cpu ? { cpu: [cpu] } : {}) };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
fs.writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} optional platform entries`);
