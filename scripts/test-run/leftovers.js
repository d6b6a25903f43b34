// What a test run left running: every process that carries the run's marker in its environment (children inherit
// it, also those that detach into a session of their own), and every server a test registered (Redis, PostgreSQL,
// nginx and sshd write their process title over their environment, marker and all), with the TCP ports it listens
// on. Linux /proc only.
const fs = require('node:fs');
const path = require('node:path');

const MARKER = 'SINGPASS_FLOWS_TEST_RUN';
/** The folder where tests register their servers' pids (set by the runner). */
const REGISTRY = 'SINGPASS_FLOWS_TEST_PIDS';

/** When a process started (clock ticks after boot): a pid reused by a later process has another. */
function startTime(pid) {
  const stat = read(`/proc/${pid}/stat`)?.toString();
  return stat ? stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] : undefined;
}

/** Note a server for the run's leftover check; nothing outside a run (no registry in the environment). */
function register(pid) {
  const dir = process.env[REGISTRY];
  const started = pid && startTime(pid);
  if (dir && started) fs.writeFileSync(path.join(dir, String(pid)), started);
}

/** The registered servers still running (same pid, same start time). */
function registeredAlive(dir) {
  if (!dir || !fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).map(Number).filter((pid) => startTime(pid) === fs.readFileSync(path.join(dir, String(pid)), 'utf8'));
}

/** Inodes of listening TCP sockets (IPv4 and IPv6) → local port. */
function listeningSockets() {
  const byInode = new Map();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // st 0A: LISTEN
      if (f.length > 9 && f[3] === '0A') byInode.set(f[9], parseInt(f[1].split(':').pop(), 16));
    }
  }
  return byInode;
}

function read(file) {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined; // gone, or not ours to read
  }
}

/**
 * Processes whose environment holds `MARKER=<marker>`, and the servers registered in `registry`, but for the pids in
 * `except`.
 * @returns {Array<{pid: number, command: string, ports: number[]}>}
 */
function leftovers(marker, except = [process.pid], registry = undefined) {
  const wanted = Buffer.from(`${MARKER}=${marker}\0`);
  const registered = registeredAlive(registry);
  const sockets = listeningSockets();
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (except.includes(pid)) continue;
    const env = read(`/proc/${pid}/environ`);
    if (!registered.includes(pid) && (!env || !Buffer.concat([env, Buffer.from('\0')]).includes(wanted))) continue;
    const stat = read(`/proc/${pid}/stat`)?.toString() ?? '';
    if (/\) Z /.test(stat)) continue; // a zombie holds nothing; its parent reaps it
    const command = (read(`/proc/${pid}/cmdline`)?.toString() ?? '').split('\0').filter(Boolean).join(' ');
    const ports = [];
    let fds = [];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      // gone
    }
    for (const fd of fds) {
      let link = '';
      try {
        link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && sockets.has(m[1])) ports.push(sockets.get(m[1]));
    }
    found.push({ pid, command: command.slice(0, 200), ports: [...new Set(ports)].sort((a, b) => a - b) });
  }
  return found;
}

/** SIGKILL each of them (a run must not leave a machine busier than it found it). */
function killAll(found) {
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

module.exports = { MARKER, REGISTRY, leftovers, killAll, register };
