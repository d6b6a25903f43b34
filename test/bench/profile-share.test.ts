import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { profileShares, splitByShares } from '../../bench/profile-share';

const OURS = 'file:///u/.n8n/nodes/node_modules/pkg/dist/core.js';
const isOurs = (url: string): boolean => url.includes('/.n8n/nodes/node_modules/');

/** A profile: root → ours → node:crypto; root → host → node:net; gc; idle. Samples 1 ms apart from t=1000 µs. */
function profile(samples: number[]): unknown {
  const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url }, children });
  return {
    nodes: [
      frame(1, '(root)', '', [2, 4, 6, 7, 8]),
      frame(2, 'sign', OURS, [3]), frame(3, 'verify', 'node:internal/crypto/sig'),
      frame(4, 'execute', 'file:///n8n/node_modules/n8n-core/dist/x.js', [5]), frame(5, 'write', 'node:net'),
      frame(6, '(garbage collector)', ''), frame(7, '(idle)', ''), frame(8, '(program)', ''),
    ],
    startTime: 0,
    samples,
    timeDeltas: samples.map(() => 1000),
  };
}

describe('profileShares', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spfl-prof-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives each sample to the nearest non-Node frame, keeps GC and V8 apart, skips idle and what is outside the window', () => {
    // t = 1..10 ms: ours (via node:crypto) ×3, host (via node:net) ×2, gc, program, idle ×2, then ours at t=10 ms
    fs.writeFileSync(path.join(dir, 'a.cpuprofile'), JSON.stringify(profile([3, 2, 3, 5, 4, 6, 8, 7, 7, 2])));
    fs.mkdirSync(path.join(dir, 'thread'));
    fs.writeFileSync(path.join(dir, 'thread', 'b.cpuprofile'), JSON.stringify(profile([5])));
    const s = profileShares([dir], isOurs, { fromUs: 0, toUs: 9_000 });
    expect(s).toEqual({ busyMs: 8, oursMs: 3, hostMs: 3, sharedMs: 2 });
    expect(profileShares([dir], isOurs, { fromUs: 0, toUs: 10_000 }).oursMs).toBe(4);
  });

  it('splits a CPU figure in the proportion of the attributed samples', () => {
    expect(splitByShares(100, { busyMs: 10, oursMs: 2, hostMs: 6, sharedMs: 2 })).toEqual({ ours: 25, host: 75, oursFraction: 0.25 });
    expect(splitByShares(100, { busyMs: 0, oursMs: 0, hostMs: 0, sharedMs: 0 })).toEqual({ ours: 0, host: 100, oursFraction: 0 });
  });
});
