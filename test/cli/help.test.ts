import { main } from '../../cli/index';
import { commands } from '../../cli/commands';

describe('singpass-flows CLI', () => {
  let out: string[];
  let log: jest.SpyInstance;
  let err: jest.SpyInstance;
  beforeEach(() => {
    out = [];
    log = jest.spyOn(console, 'log').mockImplementation((...a) => void out.push(a.join(' ')));
    err = jest.spyOn(console, 'error').mockImplementation((...a) => void out.push(a.join(' ')));
  });
  afterEach(() => { log.mockRestore(); err.mockRestore(); });

  test('lists every command in the top-level help', async () => {
    expect(await main(['--help'])).toBe(0);
    for (const c of commands) expect(out.join('\n')).toContain(c.name);
  });

  test('the commands docs/cli.md lists are all registered', () => {
    expect(commands.map((c) => c.name).sort()).toEqual(expect.arrayContaining(['demo', 'keys', 'sandbox', 'sign', 'verify']));
  });

  test.each(commands.map((c) => [c.name]))('"%s --help" prints usage and exits 0', async (name) => {
    expect(await main([name, '--help'])).toBe(0);
    expect(out.join('\n')).toMatch(/usage/i);
  });

  test('an unknown command exits 2 with the command list', async () => {
    expect(await main(['nope'])).toBe(2);
    expect(out.join('\n')).toContain('Unknown command');
  });
});
