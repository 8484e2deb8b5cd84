// Identity under concurrency (D28): many overlapping identify / track / addAlias calls at once never leave an alias
// pointing to two users nor lose one, and end exactly where the same calls run one by one in call order would.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../errors.js';
import type { Store } from '../../store/contract.js';
import { fromKeyPart } from '../../store/layout.js';
import { openLevelStore } from '../../store/level.js';
import { Identity } from './identity.js';
import { CountingStore, dumpPrefix, seededRandom, sequentialIds } from '../../../test/support/identity.js';
import type { AliasInput } from './validate.js';

const ORG = 'a0000000-0000-4000-8000-0000000000c1';
const USERS = Array.from({ length: 12 }, (_, i) => `c0000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
const TAGS = ['email', 'crm'];

type Call =
  | { kind: 'identify'; user: string; aliases: AliasInput[] }
  | { kind: 'track'; user?: string; aliases: AliasInput[] }
  | { kind: 'addAlias'; user: string; alias: AliasInput };

function randomCalls(seed: number, count: number, kinds: ReadonlyArray<Call['kind']>): Call[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const randomAlias = (): AliasInput => ({
    tag: pick(TAGS),
    id: `id${Math.floor(random() * 25)}`,
    priority: Math.floor(random() * 6),
  });
  return Array.from({ length: count }, () => {
    const kind = pick(kinds);
    const aliases = Array.from({ length: 1 + Math.floor(random() * 4) }, randomAlias);
    if (kind === 'identify') return { kind, user: pick(USERS), aliases };
    if (kind === 'addAlias') return { kind, user: pick(USERS), alias: aliases[0] as AliasInput };
    return random() < 0.3 ? { kind, user: pick(USERS), aliases } : { kind, aliases };
  });
}

/** The same rules, one call at a time, over plain maps: what the store must end up holding. */
class SequentialModel {
  readonly pointers = new Map<string, string>();
  readonly users = new Set<string>();
  constructor(private readonly newId: () => string) {}

  apply(call: Call): string {
    const key = (alias: { tag: string; id: string }) => JSON.stringify([alias.tag, alias.id]);
    const given = call.kind === 'addAlias' ? [call.alias] : call.aliases;
    const unique = given.filter((alias, index) => given.findIndex((other) => key(other) === key(alias)) === index);
    let winner: AliasInput | undefined;
    for (const alias of unique) {
      if (this.pointers.has(key(alias)) && (winner === undefined || alias.priority < winner.priority)) winner = alias;
    }
    let target: string;
    let rebind: AliasInput[];
    if (call.kind === 'identify') {
      target = winner === undefined ? call.user : (this.pointers.get(key(winner)) as string);
      rebind = unique;
    } else if (call.kind === 'addAlias') {
      const current = this.pointers.get(key(call.alias));
      if (current !== undefined && current !== call.user) return 'conflict';
      target = call.user;
      rebind = unique;
    } else {
      if (call.user !== undefined) target = call.user;
      else if (winner !== undefined) target = this.pointers.get(key(winner)) as string;
      else target = this.newId();
      rebind = unique.filter((alias) => !this.pointers.has(key(alias)));
    }
    this.users.add(target);
    for (const alias of rebind) this.pointers.set(key(alias), target);
    return target;
  }
}

async function run(identity: Identity, call: Call): Promise<string> {
  try {
    if (call.kind === 'identify') return await identity.identify(ORG, call.user, call.aliases);
    if (call.kind === 'addAlias') return (await identity.addAlias(ORG, call.user, call.alias)).platform_id;
    return (await identity.resolveForTrack(ORG, { aliases: call.aliases, ...(call.user ? { user_id: call.user } : {}) }))
      .userId;
  } catch (error) {
    if (error instanceof ServiceError && error.code === 4000) return 'conflict';
    throw error;
  }
}

/** Reads `a!`, `ua!` and `u!` back and checks they agree: one user per alias, mirrored, every user recorded. */
async function readConsistentState(store: Store): Promise<{ pointers: Map<string, string>; users: Set<string> }> {
  const pointers = new Map<string, string>();
  for (const [key, value] of Object.entries(await dumpPrefix(store, 'a', ORG))) {
    const [, , tag, id] = key.split('!');
    pointers.set(JSON.stringify([fromKeyPart(tag as string), fromKeyPart(id as string)]), (value as { user_id: string }).user_id);
  }
  const mirrored = new Map<string, string>();
  for (const key of Object.keys(await dumpPrefix(store, 'ua', ORG))) {
    const [, , user, tag, id] = key.split('!');
    const aliasId = JSON.stringify([fromKeyPart(tag as string), fromKeyPart(id as string)]);
    expect(mirrored.has(aliasId), `alias ${aliasId} listed under two users`).toBe(false);
    mirrored.set(aliasId, user as string);
  }
  expect(mirrored).toEqual(pointers);
  const users = new Set(Object.keys(await dumpPrefix(store, 'u', ORG)).map((key) => key.split('!')[2] as string));
  for (const user of pointers.values()) expect(users.has(user)).toBe(true);
  return { pointers, users };
}

describe('identity under concurrency (D28)', () => {
  it('200 concurrent identifies over overlapping aliases with random priorities', async () => {
    const store = new CountingStore();
    const identity = new Identity(store, { newId: sequentialIds(1) });
    const calls = randomCalls(20260101, 200, ['identify']);
    const results = await Promise.all(calls.map((call) => run(identity, call)));

    const model = new SequentialModel(sequentialIds(1));
    expect(results).toEqual(calls.map((call) => model.apply(call)));
    const state = await readConsistentState(store);
    expect(state.pointers).toEqual(model.pointers);
    expect(state.users).toEqual(model.users);
    for (const call of calls) for (const alias of call.kind === 'addAlias' ? [call.alias] : call.aliases) {
      expect(state.pointers.has(JSON.stringify([alias.tag, alias.id]))).toBe(true);
    }
  });

  it('identify, track and addAlias interleaved: the same end state as one by one in call order', async () => {
    for (const seed of [1, 2, 3]) {
      const store = new CountingStore();
      const identity = new Identity(store, { newId: sequentialIds(2) });
      const calls = randomCalls(seed, 300, ['identify', 'track', 'addAlias']);
      // Half start at once; the other half start while the first half is still queued.
      const first = calls.slice(0, 150).map((call) => run(identity, call));
      await Promise.resolve();
      const second = calls.slice(150).map((call) => run(identity, call));
      const results = await Promise.all([...first, ...second]);

      const model = new SequentialModel(sequentialIds(2));
      expect(results).toEqual(calls.map((call) => model.apply(call)));
      expect(results).toContain('conflict');
      const state = await readConsistentState(store);
      expect(state.pointers).toEqual(model.pointers);
      expect(state.users).toEqual(model.users);
    }
  });

  it('a tiny cache (constant eviction) gives the same answers and end state', async () => {
    const store = new CountingStore();
    const identity = new Identity(store, { newId: sequentialIds(5), cacheSize: 3 });
    const calls = randomCalls(99, 250, ['identify', 'track', 'addAlias']);
    const results = await Promise.all(calls.map((call) => run(identity, call)));
    const model = new SequentialModel(sequentialIds(5));
    expect(results).toEqual(calls.map((call) => model.apply(call)));
    expect((await readConsistentState(store)).pointers).toEqual(model.pointers);
  });

  it('over LevelDB with a cache of 3 entries (reads ahead of the queue, then at the turn): the same answers and end state', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'audience-identity-'));
    const level = await openLevelStore(dir);
    try {
      const store = new CountingStore(level);
      const identity = new Identity(store, { newId: sequentialIds(6), cacheSize: 3 });
      const calls = randomCalls(4242, 300, ['identify', 'track', 'addAlias']);
      const first = calls.slice(0, 150).map((call) => run(identity, call));
      await Promise.resolve();
      const results = await Promise.all([...first, ...calls.slice(150).map((call) => run(identity, call))]);
      const model = new SequentialModel(sequentialIds(6));
      expect(results).toEqual(calls.map((call) => model.apply(call)));
      const state = await readConsistentState(store);
      expect(state.pointers).toEqual(model.pointers);
      expect(state.users).toEqual(model.users);
    } finally {
      await level.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a second instance reading the same store agrees after the storm (nothing only in a cache)', async () => {
    const store = new CountingStore();
    const identity = new Identity(store, { newId: sequentialIds(3) });
    const calls = randomCalls(77, 200, ['identify', 'track']);
    const results = await Promise.all(calls.map((call) => run(identity, call)));
    const fresh = new Identity(store, { newId: sequentialIds(4) });
    const model = new SequentialModel(sequentialIds(3));
    calls.forEach((call) => model.apply(call));
    for (const [aliasId, user] of model.pointers) {
      const [tag, id] = JSON.parse(aliasId) as [string, string];
      expect(await fresh.findAliasUser(ORG, { tag, id })).toBe(user);
    }
    expect(results.length).toBe(200);
  });
});
