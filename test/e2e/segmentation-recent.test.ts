// Issue 12, stateless segmentation at its own speed: a state sent back that this process sealed lately starts from
// the copy it kept decoded (routes/segmentation/recent-states.ts) instead of being opened from its bytes. Exactly the
// same answers either way: two servers, one keeping states and one opening every state (0 bytes), get the same calls
// (chained states, an older state sent again, one state sent by two calls at once, a state sealed under an older
// plan) and must answer the same cohorts, entry times and sealed contents.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeState } from '../../engine/index.js';
import { StateSigner } from '../../server/routes/segmentation/state.js';
import { STATELESS, startSegmentationHarness, type CallResult, type SegmentationHarness } from './support-segmentation.js';

let kept: SegmentationHarness;
let opened: SegmentationHarness;

beforeAll(async () => {
  [kept, opened] = await Promise.all([startSegmentationHarness(), startSegmentationHarness({ recentStateBytes: 0 })]);
});

afterAll(async () => {
  await Promise.all([kept?.close(), opened?.close()]);
});

const T0 = Date.UTC(2025, 2, 1);
let minute = 0;
/** The same events for both servers: names cycling over the harness cohorts' events, one minute apart. */
function events(count: number, sessionId: string): unknown[] {
  return Array.from({ length: count }, (_, i) => ({
    name: ['Pageview', 'Click', 'Pageview', 'Search'][(minute + i) % 4],
    time: new Date(T0 + 60_000 * (minute++ + i)).toISOString(),
    properties: { n: i },
    session_id: i % 3 === 2 ? null : sessionId,
  }));
}

/** What a sealed state holds (the engine state's bytes and the entry times), opened with the server's own key. */
async function contents(h: SegmentationHarness, user: string, result: CallResult): Promise<unknown> {
  const signer = new StateSigner(h.store);
  const state = await signer.open(h.keys.org, user, result.body.state.internal_state);
  return { state: [...encodeState(state.state)], entries: [...state.entries] };
}

/** One call to both servers with the same body; each server's answer (states sent back are its own). */
async function both(user: string, batch: unknown[], states?: [CallResult, CallResult]): Promise<[CallResult, CallResult]> {
  const body = (prior?: CallResult) => ({ user_id: user, events: batch, ...(prior === undefined ? {} : { state: prior.body.state }) });
  const answers = await Promise.all([kept.call(STATELESS, body(states?.[0])), opened.call(STATELESS, body(states?.[1]))]);
  for (const answer of answers) expect(answer.status).toBe(200);
  const [a, b] = answers;
  expect({ cohorts: a.body.state.cohorts, external: a.body.state.external_state }).toEqual({ cohorts: b.body.state.cohorts, external: b.body.state.external_state });
  expect(await contents(kept, user, a)).toEqual(await contents(opened, user, b));
  return answers;
}

describe('states kept decoded (issue 12): the same answers as states opened from their bytes', () => {
  it('chained states, an older state sent again, one state sent by two calls at once', async () => {
    const hitsBefore = kept.segmentation.recentStates().hits;
    let withState = 0;
    for (let u = 0; u < 4; u++) {
      const user = randomUUID();
      const session = randomUUID();
      const first = await both(user, events(2, session));
      let latest = first;
      for (let call = 0; call < 5; call++) {
        latest = await both(user, events(1 + (call % 3), session), latest);
        withState++;
      }
      // An older state again (a client that lost its latest): from the kept copy of that state, not from the latest.
      await both(user, events(2, session), first);
      await both(user, events(1, session), first);
      withState += 2;
      // The same state in two calls at once: each starts from its own copy.
      await Promise.all([both(user, events(2, session), latest), both(user, events(3, randomUUID()), latest)]);
      withState += 2;
    }
    // Every state sent back to the keeping server was one it had sealed: none was opened from its bytes there.
    expect(kept.segmentation.recentStates().hits - hitsBefore).toBe(withState);
    expect(opened.segmentation.recentStates()).toEqual({ hits: 0, misses: 0, bytes: 0, entries: 0 });
  });

  it('a state sealed under an older plan is opened once, then kept: sent again, it starts from the kept copy', async () => {
    const user = randomUUID();
    const session = randomUUID();
    const first = await both(user, events(3, session));
    const codes = await Promise.all([kept, opened].map((h) => h.addCohort('clicked twice', { event: 'Click', frequency: { greater_than_or_equal_to: 2 } })));
    expect(codes[0]).toBe(codes[1]);
    const before = kept.segmentation.recentStates();
    await both(user, events(2, session), first); // sealed under the plan before: opened, bound to the new plan, kept
    await both(user, events(1, session), first); // the same state again: from the kept copy
    await both(user, events(2, session), first);
    const after = kept.segmentation.recentStates();
    expect({ hits: after.hits - before.hits, misses: after.misses - before.misses }).toEqual({ hits: 2, misses: 1 });
  });

  it('a state the keeping server did not seal, or sealed for another user, is opened (or refused) as before', async () => {
    const user = randomUUID();
    const [, fromOther] = await both(user, events(3, randomUUID()));
    // Sealed by the other server (another organization's key): refused, as any foreign state (D42).
    const foreign = await kept.call(STATELESS, { user_id: user, events: [], state: fromOther.body.state });
    expect(foreign.status).toBe(400);
    const [mine] = await both(user, events(3, randomUUID()));
    const misses = kept.segmentation.recentStates().misses;
    const someoneElse = await kept.call(STATELESS, { user_id: randomUUID(), events: [], state: mine.body.state });
    expect(someoneElse.status).toBe(400);
    expect(kept.segmentation.recentStates().misses).toBe(misses + 1);
  });
});
