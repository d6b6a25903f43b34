/**
 * Whose code a process spent its CPU on, from the V8 CPU profiles it wrote (`--cpu-prof`), over a window of the
 * machine's monotonic clock (V8 stamps samples with it, in µs, as `process.hrtime` reads it). Each sample goes to the
 * nearest JavaScript frame that is not Node's own (so a `crypto.verify` our code calls is ours, a socket write n8n's
 * client makes is n8n's); garbage collection and V8's own time are left apart, to be shared in proportion.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface ProfileShares {
  /** Sampled busy time (everything but idle) in the window, ms. */
  busyMs: number;
  /** Samples whose nearest non-Node frame is ours. */
  oursMs: number;
  /** Samples whose nearest non-Node frame is anybody else's (the host engine). */
  hostMs: number;
  /** Garbage collection, V8's own time and samples with no JavaScript frame: nobody's in particular. */
  sharedMs: number;
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The shares over every `.cpuprofile` under `dirs` (each process or thread writes its own file). */
export function profileShares(dirs: string[], isOurs: (url: string) => boolean, window: { fromUs: number; toUs: number }): ProfileShares {
  const total: ProfileShares = { busyMs: 0, oursMs: 0, hostMs: 0, sharedMs: 0 };
  const files = dirs.flatMap((dir) => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map(String).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(dir, f)) : []));
  for (const f of files) {
    const one = sharesOf(JSON.parse(fs.readFileSync(f, 'utf8')) as CpuProfile, isOurs, window);
    total.busyMs += one.busyMs;
    total.oursMs += one.oursMs;
    total.hostMs += one.hostMs;
    total.sharedMs += one.sharedMs;
  }
  return total;
}

/** `ms` of CPU split by the shares: ours and the host's, the shared part given out in the same proportion. */
export function splitByShares(ms: number, s: ProfileShares): { ours: number; host: number; oursFraction: number } {
  const attributed = s.oursMs + s.hostMs;
  const oursFraction = attributed > 0 ? s.oursMs / attributed : 0;
  return { ours: ms * oursFraction, host: ms * (1 - oursFraction), oursFraction };
}

function sharesOf(p: CpuProfile, isOurs: (url: string) => boolean, window: { fromUs: number; toUs: number }): ProfileShares {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const owner = new Map<number, 'ours' | 'host' | 'shared'>();
  const ownerOf = (id: number): 'ours' | 'host' | 'shared' => {
    const known = owner.get(id);
    if (known) return known;
    let result: 'ours' | 'host' | 'shared' = 'shared';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const url = byId.get(at)!.callFrame.url;
      if (url && !url.startsWith('node:')) {
        result = isOurs(url) ? 'ours' : 'host';
        break;
      }
    }
    owner.set(id, result);
    return result;
  };
  const out: ProfileShares = { busyMs: 0, oursMs: 0, hostMs: 0, sharedMs: 0 };
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (t < window.fromUs || t > window.toUs) continue;
    const node = byId.get(p.samples[i])!;
    if (node.callFrame.functionName === '(idle)') continue;
    const ms = p.timeDeltas[i] / 1000;
    out.busyMs += ms;
    const who = node.callFrame.functionName === '(garbage collector)' || node.callFrame.functionName === '(program)' ? 'shared' : ownerOf(node.id);
    if (who === 'ours') out.oursMs += ms;
    else if (who === 'host') out.hostMs += ms;
    else out.sharedMs += ms;
  }
  return out;
}
