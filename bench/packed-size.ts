// The bytes of a packed state (engine/state/pack.ts, `serve --decoded-states`) with the bench's 100 cohorts: the
// mean over 20 users of the sample generator after 1, 3, 10, 30 and 100 events, beside the decoded state's numbers
// and flags. Not part of `npm run bench`. Run: npm run build && node dist/bench/packed-size.js

import { compilePlan, newUserState, packState, segment } from '../engine/index.js';
import { SampleGenerator } from '../test/support/sample-cohorts.js';

const gen = new SampleGenerator(42);
const plan = compilePlan(gen.cohorts(100), 1);
const ctx = gen.context();
const USERS = 20;
for (const events of [1, 3, 10, 30, 100]) {
  let packed = 0;
  let decoded = 0;
  for (let seed = 1; seed <= USERS; seed++) {
    const state = newUserState();
    segment(plan, state, new SampleGenerator(seed).events(events, Date.UTC(2026, 0, 1)), ctx);
    decoded += state.nums.byteLength + state.flags.byteLength;
    packState(state);
    packed += (state.packed ?? '').length;
  }
  process.stdout.write(`${events} events: packed ${Math.round(packed / USERS)} bytes, decoded ${Math.round(decoded / USERS)} (mean of ${USERS} users)\n`);
}
