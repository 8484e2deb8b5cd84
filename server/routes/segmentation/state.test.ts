// The sealed stateless state (D23, D42) at the unit level: a rich state is sealed deflated (smaller), opens to the same
// engine state and entry times, and a small one is sealed plain; either is refused for another user.

import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { compilePlan, encodeState, membershipsOf, newUserState, segment } from '../../../engine/index.js';
import { SampleGenerator } from '../../../test/support/sample-cohorts.js';
import { StateSigner } from './state.js';

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
