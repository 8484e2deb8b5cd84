// The sealed stateless state (D23, D42) at the unit level: a rich state is sealed deflated (smaller), opens to the same
// engine state and entry times, and a small one is sealed plain; either is refused for another user. The engine
// state inside is format 3 (slot bitmap): its slot set is durable in the store before a state leaves, and a process
// that never used the plan (a restart after a cohort change) opens it from there.

import { describe, expect, it, vi } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { compilePlan, encodeState, membershipsOf, missingSlots, newUserState, segment } from '../../../engine/index.js';
import { SampleGenerator } from '../../../test/support/sample-cohorts.js';
import { StateSigner, slotSetKey, stateSecretKey } from './state.js';

const ORG = '00000000-0000-4000-8000-0000000000aa';
const USER = '00000000-0000-4000-8000-0000000000bb';

async function sealedBytes(signer: StateSigner, state: ReturnType<typeof newUserState>, entries: Map<number, number>): Promise<{ raw: string; bytes: number }> {
  const sealed = await signer.seal(ORG, USER, state, entries);
  return { raw: sealed.c, bytes: Buffer.from(sealed.c, 'base64').length };
}

describe('sealed states', () => {
  it('deflates a rich state (smaller than its parts) and opens it to the same state and entry times', async () => {
    const gen = new SampleGenerator(7);
    const plan = compilePlan(gen.cohorts(100), 1);
    const state = segment(plan, newUserState(), gen.events(40), gen.context()).state;
    const members = membershipsOf(state);
    expect(members.length).toBeGreaterThan(3);
    const entries = new Map(members.map((code, i) => [code, 1_700_000_000_000 + i * 1000]));
    const signer = new StateSigner(new MemoryStore());
    const { raw, bytes } = await sealedBytes(signer, state, entries);
    // IV, length word and tag around the plaintext: smaller than the engine state alone when deflated.
    expect(bytes - 12 - 4 - 16).toBeLessThan(encodeState(state).length);
    const opened = await signer.open(ORG, USER, { v: 2, c: raw });
    // Bound to the plan (nothing missing), it encodes to the same bytes.
    expect(missingSlots(plan, opened.state)).toEqual([]);
    expect(encodeState(opened.state)).toEqual(encodeState(state));
    expect([...opened.entries]).toEqual([...entries]);
    await expect(signer.open(ORG, '00000000-0000-4000-8000-0000000000cc', { v: 2, c: raw })).rejects.toMatchObject({ code: 1002 });
  });

  it('seals a tiny state as it is (deflating would not shrink it) and opens it', async () => {
    const signer = new StateSigner(new MemoryStore());
    const state = newUserState();
    const { raw } = await sealedBytes(signer, state, new Map());
    const opened = await signer.open(ORG, USER, { v: 2, c: raw });
    expect(membershipsOf(opened.state)).toEqual([]);
    expect(opened.entries.size).toBe(0);
  });
});

describe('slot sets (engine format 3)', () => {
  const gen = new SampleGenerator(11);
  const plan = compilePlan(gen.cohorts(100), 1);
  const ctx = gen.context();

  it('the plan\'s slot set is made durable once, before the first state that indexes it is handed out', async () => {
    const writes: number[] = [];
    const store = new MemoryStore();
    const signer = new StateSigner(store, undefined, async (org, fingerprint, ids) => {
      writes.push(fingerprint);
      await store.batch([{ type: 'put', key: slotSetKey(org, fingerprint), value: [...ids] }]);
    });
    for (let i = 0; i < 3; i++) await signer.seal(ORG, USER, segment(plan, newUserState(), gen.events(5), ctx).state, new Map());
    expect(writes).toHaveLength(1);
    expect(((await store.get(slotSetKey(ORG, writes[0] as number))) as number[]).length).toBe(plan.slots.length);
  });

  it('a process that never used the plan opens the state exactly from the stored slot set; without it the state is 400 1002', async () => {
    const store = new MemoryStore();
    const state = segment(plan, newUserState(), gen.events(12), ctx).state;
    const members = membershipsOf(state);
    const { c } = await new StateSigner(store).seal(ORG, USER, state, new Map());
    const more = gen.events(50, state.time + 60_000);
    const expected = encodeState(segment(plan, state, more, ctx).state);

    // A fresh module graph: an engine that has compiled no plan and knows no slot set, as after a restart.
    vi.resetModules();
    const fresh = await import('./state.js');
    const engine = await import('../../../engine/index.js');
    expect(engine.compilePlan).not.toBe(compilePlan);
    const opened = await new fresh.StateSigner(store).open(ORG, USER, { v: 2, c });
    expect(engine.membershipsOf(opened.state)).toEqual(members);
    const freshPlan = engine.compilePlan(new SampleGenerator(11).cohorts(100), 1);
    expect(engine.encodeState(engine.segment(freshPlan, opened.state, more, ctx).state)).toEqual(expected);

    // The same secret, no slot set stored: refused as a state this service cannot read, nothing thrown past the route.
    const bare = new MemoryStore();
    await bare.batch([{ type: 'put', key: stateSecretKey(ORG), value: await store.get(stateSecretKey(ORG)) }]);
    vi.resetModules();
    const another = await import('./state.js');
    await expect(new another.StateSigner(bare).open(ORG, USER, { v: 2, c })).rejects.toMatchObject({ code: 1002 });
    // Given the organization's current plan (the same cohorts), it needs no stored slot set: a cluster node that has
    // not applied the control plane's copy yet still opens a state sealed under the current plan.
    const anotherEngine = await import('../../../engine/index.js');
    const current = anotherEngine.compilePlan(new SampleGenerator(11).cohorts(100), 1);
    const viaPlan = await new another.StateSigner(bare).open(ORG, USER, { v: 2, c }, current);
    expect(anotherEngine.membershipsOf(viaPlan.state)).toEqual(members);
  });
});
