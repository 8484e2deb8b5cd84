// The inputs a replicated command takes from its scope (issue 15): every node applies the control plane's commands
// in the same order, and each must reach the same store state, so the clock, the ids and the random bytes a command
// handler uses come from the command itself (its time, its seed) instead of from the node applying it.
//
// The scope is an AsyncLocalStorage: the domain services and routes keep calling `clock.now()`, `newId()` and
// `randomBytes()`; inside a command they get the command's values. The scope is closed once the handler settles, so
// background work the handler started (a sweep, a delivery timer) sees the real clock afterwards.

import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes as cryptoRandomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../services.js';
import { uuidFromBytes } from '../domain/identity/uuid.js';

interface Scope {
  /** The command's stream sequence (what a node's store records as applied). */
  readonly seq: number;
  readonly at: number;
  readonly seed: Uint8Array;
  counter: number;
  open: boolean;
}

const storage = new AsyncLocalStorage<Scope>();

function current(): Scope | undefined {
  const scope = storage.getStore();
  return scope?.open === true ? scope : undefined;
}

/** Runs `work` as the application of command `seq`: its time is `at`, its ids and bytes derive from `seed`. */
export async function inCommandScope<T>(seq: number, at: number, seed: Uint8Array, work: () => Promise<T>): Promise<T> {
  const scope: Scope = { seq, at, seed, counter: 0, open: true };
  try {
    return await storage.run(scope, work);
  } finally {
    scope.open = false;
  }
}

/** The sequence of the command being applied, if any. */
export function commandSeq(): number | undefined {
  return current()?.seq;
}

/** The next `bytes` deterministic bytes of the command: SHA-256 of (seed, counter), as many blocks as needed. */
function derived(scope: Scope, bytes: number): Buffer {
  const blocks: Buffer[] = [];
  for (let have = 0; have < bytes; have += 32) {
    blocks.push(createHash('sha256').update(scope.seed).update(String(scope.counter++)).digest());
  }
  return Buffer.concat(blocks).subarray(0, bytes);
}

/** A UUID v4 made of the command's bytes inside a command, a random one outside. */
export function scopedId(): string {
  const scope = current();
  if (scope === undefined) return randomUUID();
  return uuidFromBytes(derived(scope, 16), 4);
}

/** The command's bytes inside a command, random bytes outside. */
export function scopedRandomBytes(size: number): Buffer {
  const scope = current();
  return scope === undefined ? cryptoRandomBytes(size) : derived(scope, size);
}

/** The command's time inside a command, the wall clock outside. */
export const scopedClock: Clock = {
  now: () => {
    const scope = current();
    return new Date(scope === undefined ? Date.now() : scope.at);
  },
};
