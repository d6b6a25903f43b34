/**
 * The session state machine's table (src/session/transitions.ts) and its guard: the table is a connected machine
 * with one way in and no way out of an ended phase, `advance` refuses any move that is not a row (or that leaves
 * fields describing another phase), and no code outside transitions.ts writes a record's phase or revision. That
 * every row is exercised by the engine is asserted at the end of engine-transitions.test.ts.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SingpassFlowsError } from '../../src/errors';
import { TRANSITIONS, nextStep, phaseFromFields, transitionKey, withPhase, type SessionPhase, type SessionRecord } from '../../src/session';
import { advance } from '../../src/session/transitions';

const root = join(__dirname, '..', '..');
const clock = (): number => Date.now();
const ENDED: SessionPhase[] = ['completed', 'undelivered', 'failed', 'expired'];
const ALL: SessionPhase[] = ['waitingForScan', 'certificateClaimed', 'atSavePoint', 'hashSubmitted', 'signed', 'handingOver', ...ENDED];

function fixture(name: string): SessionRecord {
  return JSON.parse(readFileSync(join(root, 'test/fixtures/session-records/v1', `${name}.json`), 'utf8')) as SessionRecord;
}

describe('the table', () => {
  it('has one row per phase and verb', () => {
    const keys = TRANSITIONS.map(transitionKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('reaches every phase from start, and every phase that has not ended can still end', () => {
    const reached = new Set<string>(['new']);
    for (let grew = true; grew;) {
      grew = false;
      for (const t of TRANSITIONS) if (reached.has(t.from) && !reached.has(t.to)) { reached.add(t.to); grew = true; }
    }
    expect([...reached].sort()).toEqual(['new', ...ALL].sort());
    for (const phase of ALL.filter((p) => !ENDED.includes(p))) {
      const exits = TRANSITIONS.filter((t) => t.from === phase && t.to !== phase).map((t) => t.to);
      expect({ phase, ends: exits.some((to) => ENDED.includes(to)) }).toEqual({ phase, ends: true });
    }
  });

  it('leaves nothing out of an ended session (a finished one names its next signer; an undelivered one takes a late acknowledgement)', () => {
    const fromEnded = TRANSITIONS.filter((t) => ENDED.includes(t.from as SessionPhase));
    expect(fromEnded.filter((t) => t.to !== t.from).map(transitionKey)).toEqual(['undelivered:acknowledge']);
    expect(fromEnded.map(transitionKey).sort()).toEqual(['completed:nameNextSigner', 'undelivered:acknowledge', 'undelivered:nameNextSigner']);
  });

  it('a finished session is handed over until acknowledged (completed) or given up (undelivered), never failed or expired', () => {
    const out = TRANSITIONS.filter((t) => t.from === 'handingOver' && t.to !== 'handingOver').map((t) => `${t.verb}->${t.to}`).sort();
    expect(out).toEqual(['acknowledge->completed', 'giveUpHandOver->undelivered']);
    expect(TRANSITIONS.find((t) => t.verb === 'complete')).toMatchObject({ from: 'signed', to: 'handingOver' });
  });

  it('every waiting phase expires and fails on the service\'s error event; a signed session does neither', () => {
    for (const phase of ['waitingForScan', 'certificateClaimed', 'atSavePoint', 'hashSubmitted'] as const) {
      expect(TRANSITIONS.find((t) => t.from === phase && t.verb === 'expire')?.to).toBe('expired');
      expect(TRANSITIONS.find((t) => t.from === phase && t.on.includes('error'))?.to).toBe('failed');
    }
    expect(TRANSITIONS.filter((t) => t.from === 'signed' && (t.verb === 'expire' || t.on.includes('error')))).toEqual([]);
  });
});

describe('advance', () => {
  it('refuses a move that is not a row, naming the phase and the verb', () => {
    const waiting = fixture('waitingForScan');
    const err = (() => {
      try {
        advance(waiting, 'complete', { ...waiting }, clock);
      } catch (e) {
        return e as SingpassFlowsError;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(SingpassFlowsError);
    expect(err!.code).toBe('STATE_INVALID');
    expect(err!.details).toMatchObject({ phase: 'waitingForScan', verb: 'complete' });
  });

  it('refuses a row whose new fields describe another phase (a step\'s bug, not a user\'s)', () => {
    const signed = fixture('signed');
    // `complete` must leave a finished record with its hand-over; these fields still say signed
    expect(() => advance(signed, 'complete', { ...signed }, clock)).toThrow(/left a handingOver record with status signed/);
  });

  it('stores the target phase and the next revision', () => {
    const signed = fixture('signed');
    const out = advance(signed, 'deferFinish', { ...signed }, clock);
    expect(out).toMatchObject({ phase: 'signed', revision: signed.revision + 1 });
  });

  it('sets state.updatedAt to the clock\'s now on every move, a save that only counts a hash call too (take-over idle counts from it)', () => {
    const saved = fixture('atSavePoint');
    const later = saved.state.updatedAt * 1000 + 10_000;
    const counted = advance(saved, 'countHashCall', { ...saved, submitting: { ...saved.submitting!, attempts: 2 } }, () => later);
    expect(counted.state.updatedAt).toBe(later / 1000);
    expect(nextStep(counted, { idleMs: 5_000 })).toMatchObject({ action: 'submitHash', at: later + 5_000 });
  });

  it('reads a record written before phases were stored by its fields', () => {
    for (const [file, phase] of [
      ['waitingForScan', 'waitingForScan'], ['certificateClaimed', 'certificateClaimed'], ['atSavePoint', 'atSavePoint'],
      ['atSavePoint-deferred', 'atSavePoint'], ['hashSubmitted', 'hashSubmitted'], ['signed', 'signed'], ['signed-deferred', 'signed'],
      ['completed', 'completed'], ['failed', 'failed'], ['expired', 'expired'],
    ] as const) {
      const record = fixture(file);
      expect(record.phase).toBeUndefined();
      expect({ file, phase: phaseFromFields(record) }).toEqual({ file, phase });
    }
  });
});

describe('nothing moves a record outside the table', () => {
  /** Sources of the core and the front ends (tests, fixtures and build output excluded). */
  function sources(dir: string): string[] {
    return readdirSync(join(root, dir)).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(join(root, path)).isDirectory()) return sources(path);
      return path.endsWith('.ts') ? [path] : [];
    });
  }
  const WRITES = [
    /\brevision:\s*[\w.]+\s*\+\s*1\b/, // a hand-made next revision
    /\brevision:\s*1\b/, // a hand-made first record
    /\.revision\s*(\+\+|\+=|=(?!=))/,
    /\.phase\s*=(?!=)/,
    /\bphase:\s*'(waitingForScan|certificateClaimed|atSavePoint|hashSubmitted|signed|handingOver|completed|undelivered|failed|expired)'/,
  ];

  it('only src/session/transitions.ts writes a phase or a revision', () => {
    const offenders: string[] = [];
    for (const file of ['src', 'nodes', 'node-red', 'cli'].flatMap(sources)) {
      if (relative('.', file) === join('src', 'session', 'transitions.ts')) continue;
      readFileSync(join(root, file), 'utf8').split('\n').forEach((line, i) => {
        if (WRITES.some((re) => re.test(line))) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});

describe('the documentation', () => {
  it('src/session/README.md lists every row of the table', () => {
    const readme = readFileSync(join(root, 'src/session/README.md'), 'utf8');
    const rows = TRANSITIONS.map((t) => `| \`${t.from}\` | ${t.on.join(', ')} | \`${t.verb}\` | \`${t.to}\` |`);
    expect(rows.filter((r) => !readme.includes(r))).toEqual([]);
  });
});

describe('withPhase (what the stores save and load)', () => {
  it('adds the phase to a record of the previous version and keeps a consistent one as it is', () => {
    const old = fixture('hashSubmitted');
    expect(withPhase(old).phase).toBe('hashSubmitted');
    const current = withPhase(old);
    expect(withPhase(current)).toBe(current);
  });

  it('refuses a record changed by hand so that its phase and its fields disagree', () => {
    const waiting = withPhase(fixture('waitingForScan'));
    const edited = { ...waiting, state: { ...waiting.state, status: 'failed' as const } };
    expect(() => withPhase(edited)).toThrow(expect.objectContaining({ code: 'STATE_INVALID', message: expect.stringMatching(/phase says waitingForScan but it has status failed/) }));
  });
});
