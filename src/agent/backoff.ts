/**
 * How long the agent waits before starting sluice again: doubling from `initialMs` with each failure
 * in a row, capped at `maxMs`. A run that stayed healthy for `maxMs` starts the count again.
 *
 * @example
 * backoffDelay(1, { initialMs: 1000, maxMs: 60_000 }); // 1000
 * backoffDelay(4, { initialMs: 1000, maxMs: 60_000 }); // 8000
 */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

/** The delay before the restart that follows the `failures`-th failure in a row (1-based). */
export function backoffDelay(failures: number, opts: BackoffOptions): number {
  const n = Math.max(1, Math.floor(failures));
  // 2^(n-1) stops growing long before it could overflow: the cap is reached first.
  const grown = opts.initialMs * 2 ** Math.min(n - 1, 40);
  return Math.min(opts.maxMs, grown);
}
