// Per-call costs of the small helpers every tracked event or answered request runs on the main thread, each beside
// what it replaced, in one tight loop per helper (warm caches: a lower bound of their cost in a loaded server): the
// access log's request line through pino's general path against server/logger.ts's direct one, pino's `isoTime`
// against `isoTimeOncePerMs`, and a minted event id (server/domain/events/event-id.ts) against the `randomUUID` it
// replaced, with `needsIdIndex` (each event's `ei!` decision); and, on the owners, a state's memberships
// (engine/state/user-state.ts `membershipsOf`, from bits in code order) against the scan of a flag byte per cohort into
// a growing array it replaced, over the engine bench's users after 60 events each (their mean memberships reported).
// Rounds alternate; prints JSON with the medians in ns.
// Run: npm run build && node dist/bench/helpers.js [calls per round, default 500000] [rounds, default 3]

import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { createLogger, isoTimeOncePerMs } from '../server/logger.js';
import type { ResponseInfo } from '../server/http/index.js';
import { mintEventId, needsIdIndex } from '../server/domain/events/event-id.js';
import { median } from './stats.js';
import { membershipsOf, newUserState, type Plan, type UserState } from '../engine/index.js';
import { engineWorkload, scheduleOf, segmentRounds } from './engine.js';

export interface HelperCosts {
  readonly calls: number;
  readonly rounds: number;
  /** Median ns per call of each helper. */
  readonly ns: Readonly<Record<string, number>>;
  /** Mean memberships of the engine bench's users the membership helpers read. */
  readonly membershipsPerUser: number;
}

/** The engine bench's users after 60 events each, bound to its plan (the membership helpers' input). */
function engineUsers(users: number): { plan: Plan; states: UserState[] } {
  const { plan, contexts, pool } = engineWorkload(42, 100);
  const rounds = 60;
  const states = Array.from({ length: users }, () => newUserState());
  segmentRounds(plan, states, scheduleOf(pool, users, rounds), contexts, 0, rounds);
  return { plan, states };
}

/** How membershipsOf read a bound state until 2026-12-05: the flag byte of each cohort, in code order, pushed. */
function membershipsByFlagScan(plan: Plan, state: UserState): number[] {
  const out: number[] = [];
  for (let i = 0; i < plan.byCode.length; i++) if (state.flags[plan.byCode[i] as number] === 1) out.push(plan.codes[i] as number);
  return out;
}

const INFO: ResponseInfo = { requestId: '0f8fad5b-d9cb-469f-a165-70867728950e', method: 'POST', route: '/v2.0/events', status: 200, durationMs: 3.14159 };

export function measureHelpers(calls: number, rounds: number): HelperCosts {
  let written = 0;
  const write = (line: string): void => {
    written += line.length;
  };
  // pino's path with the options server/logger.ts gives it, as request lines were written until 2026-11-29.
  const viaPino = pino({ level: 'info', base: undefined, timestamp: isoTimeOncePerMs(), formatters: { level: (label) => ({ level: label }) } }, { write });
  const direct = createLogger('info', write);
  const once = isoTimeOncePerMs();
  const randoms = Array.from({ length: 1024 }, () => randomUUID());
  const minted = mintEventId(1_700_000_000_000, randoms[0] as string);
  const t0 = 1_700_000_000_000;
  const { plan, states } = engineUsers(2_000);
  const stateOf = (i: number): UserState => states[i % states.length] as UserState;
  const helpers: Record<string, (i: number) => number> = {
    requestLineViaPino: () => {
      viaPino.info({ request_id: INFO.requestId, method: INFO.method, route: INFO.route, status: INFO.status, duration_ms: Math.round(INFO.durationMs * 1000) / 1000 }, 'request');
      return 0;
    },
    requestLineDirect: () => {
      direct.request(INFO);
      return 0;
    },
    isoTime: () => pino.stdTimeFunctions.isoTime().length,
    isoTimeOncePerMs: () => once().length,
    randomUUID: () => randomUUID().length,
    mintEventId: (i) => mintEventId(t0 + i, randoms[i & 1023] as string).length,
    needsIdIndex: () => (needsIdIndex(minted, t0) ? 1 : 0),
    membershipsByFlagScan: (i) => membershipsByFlagScan(plan, stateOf(i)).length,
    membershipsOf: (i) => membershipsOf(stateOf(i)).length,
  };
  const samples = new Map<string, number[]>();
  let sink = 0;
  for (let round = 0; round < rounds; round++) {
    const names = Object.keys(helpers);
    if (round % 2 === 1) names.reverse();
    for (const name of names) {
      const helper = helpers[name] as (i: number) => number;
      const started = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) sink += helper(i);
      const ns = Number(process.hrtime.bigint() - started) / calls;
      samples.set(name, [...(samples.get(name) ?? []), ns]);
    }
  }
  if (sink < 0 || written < 0) throw new Error('unreachable');
  const ns: Record<string, number> = {};
  for (const [name, values] of samples) ns[name] = Math.round(median(values));
  let members = 0;
  for (const state of states) members += membershipsOf(state).length;
  return { calls, rounds, ns, membershipsPerUser: members / states.length };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const calls = Number(process.argv[2] ?? 500_000);
  const rounds = Number(process.argv[3] ?? 3);
  process.stdout.write(`${JSON.stringify(measureHelpers(calls, rounds))}\n`);
}
