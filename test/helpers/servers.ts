/**
 * Servers that write their process title over their environment (Redis, PostgreSQL, nginx, sshd) lose the run's
 * marker with it: each helper that starts one registers its pid, so that the runner's leftover check still finds it
 * (scripts/test-run/leftovers.js). Outside `npm test` this does nothing.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { register } = require('../../scripts/test-run/leftovers.js') as { register(pid: number | undefined): void };

export function registerServer(pid: number | undefined): void {
  register(pid);
}
