// A load generator's run for the bench report's tests (bench/load.ts LoadResult): only what the report reads varies.

import type { LoadResult } from '../../bench/load.js';

export function loadResult(rps: number, latency: Partial<LoadResult['latency']> = {}): LoadResult {
  return {
    rps,
    ok: rps,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    statusCodes: { 200: rps },
    latency: { p50: 5, p90: 8, p99: 12, p999: 20, max: 30, ...latency },
    bodyBytes: { min: 400, mean: 450, max: 500 },
  };
}
