// The bytes a task and its reply cross the thread boundary as (executor.ts, worker.ts): msgpack in one buffer of its
// own, transferred, not cloned. Packing a task costs the main thread about half of what structured clone costs for
// the same objects (events with their properties, imported data), and the receiving side unpacks.
//
// A reply leaves out the membership lists that repeat the one before them (`packReply`, `unpackReply`): a user's
// result carries its sorted cohort codes before the task (`previous`), after a catch-up (`current`) and after each
// step, and in most tasks none of them changes. A list equal to the one before it is not packed, and it is restored
// on arrival as that same array, so readers see the whole reply.

import { Packr, Unpackr } from 'msgpackr';
import type { StepResult, UserResult, WorkReply } from './work.js';

const packr = new Packr({ useRecords: false, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, copyBuffers: true });

/** The message in a buffer of its own (msgpackr answers views of a shared one), ready to transfer. */
export function packMessage(value: unknown): Uint8Array {
  return new Uint8Array(packr.pack(value));
}

export function unpackMessage<T>(bytes: Uint8Array): T {
  return unpackr.unpack(bytes) as T;
}

/** A reply ready to transfer, its repeated membership lists left out. */
export function packReply(reply: WorkReply): Uint8Array {
  if (reply.needPlan === true || reply.lost !== undefined) return packMessage(reply);
  return packMessage({ ...reply, groups: reply.groups.map((users) => users.map(slimUser)) });
}

/** A reply as `runWork` answered it: every membership list left out is the one before it. */
export function unpackReply(bytes: Uint8Array): WorkReply {
  const reply = unpackMessage<WorkReply>(bytes);
  if (reply.needPlan === true || reply.lost !== undefined) return reply;
  for (const users of reply.groups) for (const user of users) restoreUser(user as WireUser);
  return reply;
}

type WireStep = Omit<StepResult, 'memberships'> & { memberships?: readonly number[] };
type WireUser = Omit<UserResult, 'current' | 'steps'> & { current?: readonly number[]; steps: WireStep[] };

function slimUser(user: UserResult): WireUser {
  const { current, steps, ...rest } = user;
  let before = current;
  const wireSteps = steps.map((step): WireStep => {
    const same = sameCodes(step.memberships, before);
    before = step.memberships;
    return same ? { transitions: step.transitions } : step;
  });
  return sameCodes(current, user.previous) ? { ...rest, steps: wireSteps } : { ...rest, current, steps: wireSteps };
}

function restoreUser(user: WireUser): void {
  user.current ??= user.previous;
  let before = user.current;
  for (const step of user.steps) {
    step.memberships ??= before;
    before = step.memberships;
  }
}

function sameCodes(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
