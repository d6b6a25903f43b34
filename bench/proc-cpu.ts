/**
 * CPU time of this process's descendants, grouped by what they are (from /proc: Linux only), so a bench can say where
 * a session's CPU goes — the DSAP processes, the stand-in service, the database, the proxy — and which part would
 * grow with more cores. Each process counts its own time plus that of its children it has reaped (a database's
 * finished backends), so two snapshots subtract to the CPU spent in between.
 */
import * as fs from 'node:fs';

const TICKS_PER_S = 100; // USER_HZ: 100 on every Linux build Node supports

interface Proc { pid: number; ppid: number; cpuMs: number; cmd: string }

function readProcs(): Proc[] {
  const out: Proc[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      // fields after "(comm)": state ppid … utime(14) stime(15) cutime(16) cstime(17), numbered from 1 at pid
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
      const cmd = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ');
      out.push({ pid: Number(name), ppid: Number(f[1]), cpuMs: (ticks * 1000) / TICKS_PER_S, cmd });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** CPU ms so far of every descendant of `root` (not `root` itself), summed per `kind(cmd)` (undefined: not counted). */
export function cpuByKind(kind: (cmd: string) => string | undefined, root = process.pid): Record<string, number> {
  const procs = readProcs();
  const children = new Map<number, Proc[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const sums: Record<string, number> = {};
  const walk = (pid: number, inherited?: string): void => {
    for (const c of children.get(pid) ?? []) {
      // a process counts under its own kind, else under its nearest classified ancestor's (a database's backends)
      const k = kind(c.cmd) ?? inherited;
      if (k) sums[k] = (sums[k] ?? 0) + c.cpuMs;
      walk(c.pid, k);
    }
  };
  walk(root);
  return sums;
}

/** `after - before`, per kind. */
export function cpuSpent(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(after)) out[k] = after[k]! - (before[k] ?? 0);
  return out;
}
