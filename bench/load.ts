// One autocannon run against a URL with a per-request body hook: a warm-up, then the measured run, whose 2xx
// latencies are recorded in an hdr-histogram-js histogram (microseconds). Also a fixed-count driver for seeding.

import { createRequire } from 'node:module';
import * as hdr from 'hdr-histogram-js';

/** The slice of autocannon's API used here (the package ships no types). */
interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  setupRequest?: (request: Record<string, unknown>, context: Record<string, unknown>) => Record<string, unknown>;
  onResponse?: (status: number, body: string, context: Record<string, unknown>) => void;
}
interface AutocannonOptions {
  url: string;
  connections: number;
  pipelining: number;
  duration?: number;
  amount?: number;
  timeout: number;
  overallRate?: number;
  requests: AutocannonRequest[];
}
interface AutocannonResult {
  duration: number;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: AutocannonOptions) => AutocannonInstance;

export interface LoadSettings {
  readonly connections: number;
  readonly pipelining: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly timeoutSeconds: number;
  /** Requests per second over all connections (autocannon's overallRate); unset: as fast as answered. */
  readonly rate?: number | undefined;
}

export interface LoadTarget {
  readonly url: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** A new body per request. */
  readonly body: () => string;
}

export interface LoadResult {
  /** 2xx responses per second of the measured run. */
  readonly rps: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Record<string, number>;
  /** Latency of 2xx responses, milliseconds. */
  readonly latency: { readonly p50: number; readonly p90: number; readonly p99: number; readonly p999: number; readonly max: number };
  /** Request body sizes of the measured run, bytes. */
  readonly bodyBytes: { readonly min: number; readonly mean: number; readonly max: number };
}

function requestOf(target: LoadTarget, sizes?: { min: number; max: number; sum: number; n: number }): AutocannonRequest {
  return {
    method: 'POST',
    path: target.path,
    headers: { 'content-type': 'application/json', ...target.headers },
    setupRequest: (request) => {
      const body = target.body();
      if (sizes !== undefined) {
        const n = Buffer.byteLength(body);
        sizes.min = Math.min(sizes.min, n);
        sizes.max = Math.max(sizes.max, n);
        sizes.sum += n;
        sizes.n++;
      }
      return { ...request, body };
    },
  };
}

/** Warm-up (discarded), then the measured run with the same settings. */
export async function runLoad(target: LoadTarget, settings: LoadSettings): Promise<LoadResult> {
  const common = {
    url: target.url,
    connections: settings.connections,
    pipelining: settings.pipelining,
    timeout: settings.timeoutSeconds,
    ...(settings.rate === undefined ? {} : { overallRate: settings.rate }),
  };
  if (settings.warmupSeconds > 0) await autocannon({ ...common, duration: settings.warmupSeconds, requests: [requestOf(target)] });
  const histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 120_000_000, numberOfSignificantValueDigits: 3 });
  const sizes = { min: Infinity, max: 0, sum: 0, n: 0 };
  const instance = autocannon({ ...common, duration: settings.durationSeconds, requests: [requestOf(target, sizes)] });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) histogram.recordValue(Math.max(1, Math.round(ms * 1000)));
  });
  const result = await instance;
  const at = (p: number): number => histogram.getValueAtPercentile(p) / 1000;
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats)) statusCodes[code] = stat.count;
  const out: LoadResult = {
    rps: result['2xx'] / result.duration,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    latency: { p50: at(50), p90: at(90), p99: at(99), p999: at(99.9), max: histogram.maxValue / 1000 },
    bodyBytes: { min: sizes.n > 0 ? sizes.min : 0, mean: sizes.n > 0 ? sizes.sum / sizes.n : 0, max: sizes.max },
  };
  histogram.destroy();
  return out;
}

/**
 * Sends the bodies `body(i)` for i = 0..count-1 over `connections`, each one answered 2xx once (autocannon builds a
 * few requests it never sends, so the indices it missed are sent in another pass); any non-2xx answer is counted and
 * the first one kept. Answers the requests per second. Used to seed users and history before the timed part.
 */
export async function sendAll(
  url: string,
  path: string,
  headers: Readonly<Record<string, string>>,
  count: number,
  body: (i: number) => string,
  options: { connections: number; progress?: (done: number) => void },
): Promise<{ rps: number; failures: number; firstFailure: string | undefined }> {
  const answered = new Uint8Array(count);
  let pending = Array.from({ length: count }, (_, i) => i);
  let done = 0;
  let failures = 0;
  let firstFailure: string | undefined;
  const started = Date.now();
  const ticker = options.progress === undefined ? undefined : setInterval(() => options.progress?.(done), 2000);
  try {
    for (let pass = 0; pending.length > 0 && pass < 5; pass++) {
      const list = pending;
      let next = 0;
      await autocannon({
        url,
        connections: Math.min(options.connections, list.length),
        pipelining: 1,
        amount: list.length,
        timeout: 60,
        requests: [
          {
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json', ...headers },
            setupRequest: (request, context) => {
              const i = list[next++ % list.length] as number;
              context['i'] = i;
              return { ...request, body: body(i) };
            },
            onResponse: (status, text, context) => {
              const i = context['i'] as number;
              if (answered[i] === 1) return;
              answered[i] = 1;
              done++;
              if (status < 200 || status >= 300) {
                failures++;
                firstFailure ??= `${status} ${text.slice(0, 300)}`;
              }
            },
          },
        ],
      });
      pending = list.filter((i) => answered[i] === 0);
    }
  } finally {
    if (ticker !== undefined) clearInterval(ticker);
  }
  if (pending.length > 0) throw new Error(`${pending.length} seeding requests were never answered`);
  return { rps: count / ((Date.now() - started) / 1000), failures, firstFailure };
}
