#!/usr/bin/env node
// An embedded Node-RED (4.x or 5.x) with this package installed the way the palette manager installs it (a package
// in <userDir>/node_modules), on 127.0.0.1 only, with Node-RED's default context storage (memory): the signing nodes
// keep their sessions in their own folder store, so the example flows need nothing in settings.js. Used by the
// end-to-end tests, the Node-RED 5 check, the editor screenshot and the demo.
// SINGPASS_TEST_CONTEXT_STORAGE=localfilesystem sets the cached file context store older READMEs asked for (its
// cache is flushed every 30 s): a test kills Node-RED inside that window to show sessions no longer depend on it.
//
//   node scripts/node-red-runtime.js --user-dir <dir> [--port 0] [--node-red <node-red package dir>] [--package <dir>]
//
// Prints one JSON line {"ready":true,"url":"http://127.0.0.1:<port>","version":"4.1.15"} once the flows started, then
// runs until SIGTERM/SIGINT (stops Node-RED cleanly). As a module: `startNodeRed(options)`.
'use strict';
const diagnostics = require('node:diagnostics_channel');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const PACKAGE_ROOT = path.resolve(__dirname, '..');

/** The settings the examples assume (see docs/node-red.md): nothing of their own. */
function settingsFor(userDir, port, extra = {}) {
  const contextStorage = process.env.SINGPASS_TEST_CONTEXT_STORAGE === 'localfilesystem' ? { contextStorage: { default: { module: 'localfilesystem' } } } : {};
  return {
    userDir,
    flowFile: 'flows.json',
    uiHost: '127.0.0.1',
    uiPort: port,
    httpAdminRoot: '/',
    httpNodeRoot: '/',
    credentialSecret: process.env.NODE_RED_CREDENTIAL_SECRET || 'singpass-flows-embedded-test-secret',
    ...contextStorage,
    logging: { console: { level: process.env.NODE_RED_LOG_LEVEL || 'warn', metrics: false, audit: false } },
    editorTheme: { tours: false, projects: { enabled: false } },
    diagnostics: { enabled: false },
    runtimeState: { enabled: false },
    telemetry: { enabled: false },
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
    ...extra,
  };
}

/** Make <userDir>/node_modules/<name> point at the package (a symlink, like `npm install <dir>` makes). */
function installPackage(userDir, packageDir) {
  const pkg = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  const target = path.join(userDir, 'node_modules', ...pkg.name.split('/'));
  fs.mkdirSync(path.dirname(target), { recursive: true });
  if (!fs.existsSync(target)) fs.symlinkSync(packageDir, target, 'dir');
  const userPkg = path.join(userDir, 'package.json');
  if (!fs.existsSync(userPkg)) {
    fs.writeFileSync(userPkg, JSON.stringify({ name: 'node-red-project', private: true, dependencies: { [pkg.name]: `file:${packageDir}` } }, null, 2));
  }
}

/**
 * Start Node-RED in this process. Resolves once the flows started, with its URL and `stop()`.
 * @param {{userDir: string, port?: number, nodeRedDir?: string, packageDir?: string|null, settings?: object}} o
 */
async function startNodeRed(o) {
  fs.mkdirSync(o.userDir, { recursive: true });
  if (o.packageDir !== null) installPackage(o.userDir, o.packageDir || PACKAGE_ROOT);
  const RED = require(o.nodeRedDir ? path.resolve(o.nodeRedDir) : 'node-red');
  const server = http.createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port || 0, '127.0.0.1', resolve);
  });
  const port = server.address().port;
  RED.init(server, settingsFor(o.userDir, port, o.settings));
  // One Express stack per root: admin (editor + API) and flows (http-in, our webhook) share "/".
  server.on('request', (req, res) => RED.httpAdmin(req, res, () => RED.httpNode(req, res)));
  const started = new Promise((resolve) => RED.events.once('flows:started', resolve));
  await RED.start();
  await started;
  return {
    url: `http://127.0.0.1:${port}`,
    version: RED.version(),
    RED,
    async stop() {
      await RED.stop();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function parse(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [k, v] = [argv[i], argv[i + 1]];
    if (k === '--user-dir') o.userDir = path.resolve(v);
    else if (k === '--port') o.port = Number(v);
    else if (k === '--node-red') o.nodeRedDir = v;
    else if (k === '--package') o.packageDir = path.resolve(v);
    else throw new Error(`unknown option ${k}`);
  }
  if (!o.userDir) throw new Error('--user-dir is required');
  return o;
}

/**
 * Test hook (never set in production): SINGPASS_TEST_SIGKILL_AFTER_HASH=1 kills this process (SIGKILL, nothing
 * flushed) the moment the signing service answered a hash submission with success — before the flow sees the
 * answer, so before it can write the session record: the crash window the engine's save point covers.
 */
function killAfterHashSubmission(gate) {
  // undici's channels see every outgoing call, whichever transport made it (its request API or fetch)
  diagnostics.subscribe('undici:request:headers', ({ request, response }) => {
    if (request.path.split('?')[0].endsWith('/hash') && response.statusCode >= 200 && response.statusCode < 300 && armed(gate)) process.kill(process.pid, 'SIGKILL');
  });
}

/**
 * Test hook (never set in production): SINGPASS_TEST_SIGKILL_AT=<path> kills this process (SIGKILL) the moment a
 * request to a URL whose path ends with <path> is about to leave, e.g. `/ca/tsa`: the first call of finishing a
 * signed session (the signature timestamp), so the crash lands after the signature was stored and before anything
 * of the finish was.
 */
function killAtRequest(pathSuffix, gate) {
  // published as the request is created, before anything is written to a socket
  diagnostics.subscribe('undici:request:create', ({ request }) => {
    if (request.path.split('?')[0].endsWith(pathSuffix) && armed(gate)) process.kill(process.pid, 'SIGKILL');
  });
}

/**
 * A kill hook's gate: without one the hook always fires. With `<hook>_ONCE=<file>` it fires only while the file
 * exists, and only in the process that deletes it — one kill among several instances sharing the file (which
 * instance takes the event is the load balancer's choice), and a restarted instance is not killed again.
 */
function armed(gate) {
  if (!gate) return true;
  try {
    fs.unlinkSync(gate);
    return true;
  } catch {
    return false;
  }
}

if (require.main === module) {
  if (process.env.SINGPASS_TEST_SIGKILL_AFTER_HASH === '1') killAfterHashSubmission(process.env.SINGPASS_TEST_SIGKILL_AFTER_HASH_ONCE);
  if (process.env.SINGPASS_TEST_SIGKILL_AT) killAtRequest(process.env.SINGPASS_TEST_SIGKILL_AT, process.env.SINGPASS_TEST_SIGKILL_AT_ONCE);
  startNodeRed(parse(process.argv.slice(2))).then(
    (nr) => {
      process.stdout.write(JSON.stringify({ ready: true, url: nr.url, version: nr.version }) + '\n');
      const stop = () => nr.stop().then(() => process.exit(0), () => process.exit(1));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (e) => {
      process.stderr.write(`node-red-runtime: ${e && e.stack ? e.stack : e}\n`);
      process.exit(1);
    },
  );
}

module.exports = { startNodeRed, settingsFor, installPackage };
