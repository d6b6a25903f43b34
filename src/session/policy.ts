/**
 * The session engine's timings, defined once for every front end (the runner behind the CLI, the Node-RED nodes, the
 * n8n nodes and both stores), so that the same record is taken over, leased, kept and expired at the same moments
 * wherever it is. A deployment may change one through the settings that name it; no front end has its own default.
 * The retry backoffs are beside the rules they belong to: `submitRetryDelayMs` (submission.ts) and
 * `finishRetryDelayMs` (finishing.ts); which failures are temporary: `isTemporarySubmitFailure`,
 * `isTemporaryFinishFailure`.
 */
export const SESSION_POLICY: Readonly<{ takeOverIdleMs: number; leaseMs: number; retentionMs: number; scanExtensionSeconds: number }> = Object.freeze({
  /**
   * How long a record in the middle of a step (claimed, at the save point, signed with no failure recorded) belongs to
   * the process working on it before a scheduler elsewhere takes it over as interrupted. Longer than any step takes
   * on a loaded machine (a B-LTA finish with slow responders), short enough that a crash costs the user little.
   */
  takeOverIdleMs: 45_000,
  /** How long a scheduler's claim on a due record (or a kept delivery) keeps other processes off it. */
  leaseMs: 60_000,
  /** How long an ended session's record stays (for a status page or a flow that looks it up), then leaves the store. */
  retentionMs: 7 * 24 * 3600 * 1000,
  /** Seconds a scanned session still receives events past `expires_at` (the service extends it after the scan). */
  scanExtensionSeconds: 120,
});
