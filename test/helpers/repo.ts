import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The repository root, from a test helper run as TypeScript (test/…) or compiled (dist/test/…, e.g. by a bench):
 * the nearest folder up with the sample flows in it.
 */
export const REPO_ROOT = ((): string => {
  for (let d = __dirname; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'flows', 'n8n')) && fs.existsSync(path.join(d, 'package.json'))) return d;
    if (path.dirname(d) === d) throw new Error(`no repository root above ${__dirname}`);
  }
})();
