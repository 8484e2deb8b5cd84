// Identity of an organization's users (D9, D28, D29, D22): users, aliases (tag, id) -> user, identify, the user of a
// tracked event and the stateless resolution. Every write for an organization is serialised; lookups are cached.

import type { BatchOp, Store } from '../../store/contract.js';
import { alreadyExists, badBody, notFound } from '../../errors.js';
import { ByteLru } from '../../byte-lru.js';
import type { AliasPointer, UserAliasEntry, UserRecord } from './keys.js';
import { aliasKey, parseUserAliasKey, userAliasKey, userAliasRange, userKey } from './keys.js';
import { KeyedQueue } from '../keyed-queue.js';
import { ReadAhead, type SharedRead } from './read-ahead.js';
import { aliasUserId, isUuid } from './uuid.js';
import type { AliasBody, AliasInput } from './validate.js';
import { requireUuid } from './validate.js';

export interface IdentityOptions {
  /** A fresh UUID v4 per call (injected so that tests are deterministic). */
  readonly newId: () => string;
  /** Entries of each lookup cache (aliases, known users); default 100 000. */
  readonly cacheSize?: number;
}

/** An alias as it is addressed: (tag, id) within the organization (D28). */
export interface AliasRef {
  readonly tag: string;
  readonly id: string;
}

/** An alias in responses: the user it points to is `platform_id` (spec "User and alias"). */
export interface AliasView {
  readonly id: string;
  readonly tag: string;
  readonly platform_id: string;
}

/** Who a tracked event is for (D29): `user_id`, non-empty `aliases`, or both (`user_id` wins). */
export interface TrackIdent {
  readonly user_id?: string;
  readonly aliases?: readonly AliasInput[];
}

/** Exactly one identifier of a user in stateless segmentation (D21). */
export type StatelessIdent =
  | { readonly user_id: string }
  | { readonly alias: AliasRef }
  | { readonly aliases: readonly AliasInput[] };

export interface TrackResolution {
  readonly userId: string;
  /** The user was not recorded before this call (a new user for new aliases, or a user_id seen for the first time). */
  readonly created: boolean;
}

/** The current pointer of each alias of a call: a user id, or null for an alias no user has. */
type Pointers = ReadonlyArray<string | null>;

/** Per alias: undefined when the cache does not know it. */
type CachedPointers = ReadonlyArray<string | null | undefined>;

interface Plan<R> {
  /** The answer, given whether this call recorded `target` as a new user. */
  readonly result: (targetCreated: boolean) => R;
  /** The user every rebound alias will point to; recorded in `u!` when not yet. */
  readonly target: string;
  /** Indexes (into the call's aliases) of the aliases to point at `target`. */
  readonly rebind: readonly number[];
}

/** The index of the known alias with the lowest priority number, the first listed on ties (D28); -1 if none. */
function winnerOf(aliases: readonly AliasInput[], pointers: Pointers): number {
  let winner = -1;
  for (let i = 0; i < aliases.length; i++) {
    if (pointers[i] === null) continue;
    if (winner < 0 || (aliases[i] as AliasInput).priority < (aliases[winner] as AliasInput).priority) winner = i;
  }
  return winner;
}

/** Keeps the first of aliases listed twice (same tag and id). */
function dedupe<A extends AliasRef>(aliases: readonly A[]): A[] {
  const seen = new Set<string>();
  return aliases.filter((alias) => {
    const id = JSON.stringify([alias.tag, alias.id]);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** The store keys of the aliases the cache does not know. */
const uncachedAliasKeys = (org: string, aliases: readonly AliasRef[], cached: CachedPointers): string[] =>
  aliases.flatMap((alias, index) => (cached[index] === undefined ? [aliasKey(org, alias.tag, alias.id)] : []));

const indexesWhere = (pointers: Pointers, keep: (pointer: string | null) => boolean): number[] =>
  pointers.flatMap((pointer, index) => (keep(pointer) ? [index] : []));

export class Identity {
  private readonly queue = new KeyedQueue();
  /** `a!` key -> user id, or null when the store has no such alias. Written through after each commit. */
  private readonly aliasCache: ByteLru<string | null>;
  /** `u!` keys known to exist. */
  private readonly userCache: ByteLru<true>;
  /** Bumped after every commit: a lookup made outside the queue caches what it read only if none happened since. */
  private generation = 0;
  private readonly newId: () => string;
  /** The store reads of queued calls, issued as they arrive and shared (read-ahead.ts). */
  private readonly readAhead: ReadAhead;

  constructor(
    private readonly store: Store,
    options: IdentityOptions,
  ) {
    this.newId = options.newId;
    const size = options.cacheSize ?? 100_000;
    // Bounded in entries only (least recently used first): a hit relinks its entry instead of re-inserting its key.
    this.aliasCache = new ByteLru<string | null>(Infinity, () => 0, { maxEntries: size });
    this.userCache = new ByteLru<true>(Infinity, () => 0, { maxEntries: size });
    this.readAhead = new ReadAhead(store, () => this.generation);
  }

  /** `POST /v2.0/users`: a new anonymous user, recorded. */
  async createUser(org: string): Promise<string> {
    const id = this.newId();
    await this.queue.run(org, () => this.commit(org, [{ type: 'put', key: userKey(org, id), value: { id } }], [], [id]));
    return id;
  }

  /** Whether the user was ever recorded (created, identified, given an alias or tracked). */
  async userExists(org: string, user: string): Promise<boolean> {
    if (!isUuid(user)) return false;
    if (this.userCache.has(userKey(org, user))) return true;
    const found = (await this.store.get<UserRecord>(userKey(org, user))) !== undefined;
    if (found) this.userCache.set(userKey(org, user), true); // users are never removed: a found user stays found
    return found;
  }

  /** The user an alias points to, or undefined. */
  async findAliasUser(org: string, alias: AliasRef): Promise<string | undefined> {
    const [pointer] = await this.lookupOutsideQueue(org, [alias]);
    return pointer ?? undefined;
  }

  /**
   * `POST /v2.0/identify` (spec identity table, D28): the known alias with the lowest priority number wins (ties:
   * first listed) and every given alias then points to the winner's user; with no known alias `userId` wins.
   * Returns the winning user. Only alias pointers move; history stays with the user it was tracked for.
   */
  async identify(org: string, userId: string, aliases: readonly AliasInput[]): Promise<string> {
    requireUuid(userId, 'user_id');
    const given = dedupe(aliases);
    return this.execute(org, given, userId, (pointers) => {
      const winner = winnerOf(given, pointers);
      const target = winner < 0 ? userId : (pointers[winner] as string);
      return { result: () => target, target, rebind: indexesWhere(pointers, (pointer) => pointer !== target) };
    });
  }

  /**
   * `POST /v2.0/users/{user_id}/aliases` (D28): binds one alias to the user. An alias of another user is 409 4000;
   * of this user, nothing changes. A user never seen before is recorded (like identify).
   */
  async addAlias(org: string, userId: string, alias: AliasBody): Promise<AliasView> {
    requireUuid(userId, 'user_id');
    const view: AliasView = { id: alias.id, tag: alias.tag, platform_id: userId };
    return this.execute(org, [alias], userId, (pointers) => {
      const current = pointers[0] ?? null;
      if (current !== null && current !== userId) {
        throw alreadyExists(`the alias (tag "${alias.tag}", id "${alias.id}") already points to another user`);
      }
      return { result: () => view, target: userId, rebind: current === null ? [0] : [] };
    });
  }

  /** `GET /v2.0/users/{user_id}/aliases`: the user's aliases in (tag, id) order; a user never seen is 404 3000 (D28). */
  async listAliases(org: string, userId: string): Promise<AliasView[]> {
    if (!(await this.userExists(org, userId))) throw notFound('user');
    const views: AliasView[] = [];
    for await (const [storeKey, entry] of this.store.iterate<UserAliasEntry>(userAliasRange(org, userId))) {
      const { tag, id } = entry ?? parseUserAliasKey(storeKey);
      views.push({ id, tag, platform_id: userId });
    }
    return views;
  }

  /**
   * The user a tracked event is for (D29, spec "Events"). With `user_id` (which wins over aliases): that user, and
   * given aliases no user has yet are bound to it (aliases of other users are left alone: only identify moves
   * them). With aliases only: the user of the known alias with the lowest priority number (ties: first listed),
   * and the given aliases no user has yet are bound to it too; when none is known, a new user with all of them.
   */
  async resolveForTrack(org: string, ident: TrackIdent): Promise<TrackResolution> {
    const { given, decide } = this.trackPlan(ident);
    return this.execute<TrackResolution>(org, given, ident.user_id, decide);
  }

  /**
   * What `resolveForTrack` answers when it would write nothing (every alias given is bound, none is rebound, the user
   * is recorded), read outside the queue; undefined when it would write. A cluster node resolves locally then, and
   * sends only the writing resolutions through the control plane (issue 15).
   */
  async resolveForTrackReadOnly(org: string, ident: TrackIdent): Promise<TrackResolution | undefined> {
    const { given, decide } = this.trackPlan(ident);
    const pointers = await this.lookupOutsideQueue(org, given);
    if (pointers.some((pointer) => pointer === null)) return undefined;
    const plan = decide(pointers);
    if (plan.rebind.length > 0 || !(await this.userExists(org, plan.target))) return undefined;
    return plan.result(false);
  }

  /** The aliases a track resolution reads and how it decides from their pointers (resolveForTrack's doc). */
  private trackPlan(ident: TrackIdent): { given: AliasInput[]; decide: (pointers: Pointers) => Plan<TrackResolution> } {
    const given = dedupe(ident.aliases ?? []);
    if (ident.user_id !== undefined) {
      const userId = requireUuid(ident.user_id, 'user_id');
      return {
        given,
        decide: (pointers) => ({
          result: (created) => ({ userId, created }),
          target: userId,
          rebind: indexesWhere(pointers, (pointer) => pointer === null),
        }),
      };
    }
    if (given.length === 0) throw badBody('aliases: must not be empty');
    return {
      given,
      decide: (pointers) => {
        const winner = winnerOf(given, pointers);
        if (winner < 0) {
          const userId = this.newId();
          return { result: () => ({ userId, created: true }), target: userId, rebind: given.map((_, index) => index) };
        }
        const userId = pointers[winner] as string;
        const rebind = indexesWhere(pointers, (pointer) => pointer === null);
        return { result: () => ({ userId, created: false }), target: userId, rebind };
      },
    };
  }

  /**
   * The users of the aliases of one imported load (D27), in order: a known alias's user; an unknown alias a new user
   * bound to it (the same alias listed twice: the same new user), unless `lookupOnly(index)`, when it gets its
   * stable stateless id (D22) and nothing is written for it. The bindings are not written here: `write` gets the
   * users and the binding ops and commits them in ONE batch with the request's own writes (D41: a load that fails
   * binds nothing). It runs inside the organization's queue, so no other identity write interleaves; the caches
   * learn the bindings only once `write` has resolved.
   */
  async resolveForLoad<R>(
    org: string,
    aliases: readonly AliasRef[],
    lookupOnly: (index: number) => boolean,
    write: (users: string[], bindings: readonly BatchOp[]) => Promise<R>,
  ): Promise<R> {
    if (aliases.length === 0) return write([], []);
    const ahead = this.readAhead.ask(this.uncachedKeys(org, aliases, this.cachedPointers(org, aliases), undefined));
    return this.queue.run(org, async () => {
      const pointers = await this.lookupInQueue(org, aliases, ahead);
      const ops: BatchOp[] = [];
      const users: string[] = [];
      const aliasUpdates: Array<readonly [string, string]> = [];
      const bound = new Map<string, string>();
      const result = aliases.map((alias, index) => {
        const pointer = pointers[index];
        if (pointer !== null && pointer !== undefined) return pointer;
        const storeKey = aliasKey(org, alias.tag, alias.id);
        const already = bound.get(storeKey);
        if (already !== undefined) return already;
        if (lookupOnly(index)) return aliasUserId(org, alias.tag, alias.id);
        const user = this.newId();
        bound.set(storeKey, user);
        const pointerValue: AliasPointer = { user_id: user, priority: 0 };
        const entry: UserAliasEntry = { id: alias.id, tag: alias.tag };
        ops.push(
          { type: 'put', key: userKey(org, user), value: { id: user } satisfies UserRecord },
          { type: 'put', key: storeKey, value: pointerValue },
          { type: 'put', key: userAliasKey(org, user, alias.tag, alias.id), value: entry },
        );
        users.push(user);
        aliasUpdates.push([storeKey, user]);
        return user;
      });
      const answer = await write(result, ops);
      if (ops.length > 0) this.committed(org, aliasUpdates, users);
      return answer;
    });
  }

  /**
   * Stateless segmentation's user (D21, D22), writing nothing: `user_id` as given; a known alias's user; for
   * `aliases`, the user of the known alias with the lowest priority number (ties: first listed). An unknown alias
   * (for `aliases`: when none is known, the winner by priority alone) gives its stable UUID v5.
   */
  async resolveStateless(org: string, ident: StatelessIdent): Promise<string> {
    if ('user_id' in ident) return ident.user_id;
    if ('alias' in ident) {
      const [pointer] = await this.lookupOutsideQueue(org, [ident.alias]);
      return pointer ?? aliasUserId(org, ident.alias.tag, ident.alias.id);
    }
    const given = dedupe(ident.aliases);
    if (given.length === 0) throw badBody('aliases: must not be empty');
    const pointers = await this.lookupOutsideQueue(org, given);
    const winner = winnerOf(given, pointers);
    if (winner >= 0) return pointers[winner] as string;
    const first = winnerOf(given, given.map(() => '')); // as if all were known: priority alone decides
    const alias = given[first] as AliasInput;
    return aliasUserId(org, alias.tag, alias.id);
  }

  /**
   * Runs one read-decide-write on aliases. When nothing is queued for the organization (or no alias is given) and
   * the cache knows every alias as bound, a plan that writes nothing returns at once; otherwise the plan is made
   * inside the queue from the store's state and committed there, so concurrent calls behave as if run one by one
   * in call order. What the cache lacks (the aliases, the user the call names) is read as the call arrives
   * (read-ahead.ts) and used at its turn when no commit came between.
   */
  private async execute<R>(
    org: string,
    given: readonly AliasBody[],
    named: string | undefined,
    decide: (pointers: Pointers) => Plan<R>,
  ): Promise<R> {
    const cached = this.cachedPointers(org, given);
    // With no aliases the answer reads no alias, so queued writes cannot change it (users are never removed).
    if (given.length === 0 || !this.queue.isBusy(org)) {
      // Only when every alias is known: then no plan needs a new id, and most repeated calls write nothing.
      if (cached.every((pointer) => typeof pointer === 'string')) {
        const plan = decide(cached as Pointers);
        if (plan.rebind.length === 0 && this.knownFromCache(org, plan.target, cached as Pointers)) return plan.result(false);
      }
    }
    const ahead = this.readAhead.ask(this.uncachedKeys(org, given, cached, named));
    return this.queue.run(org, async () => {
      const pointers = await this.lookupInQueue(org, given, ahead);
      const plan = decide(pointers);
      const ops: BatchOp[] = [];
      const users: string[] = [];
      const targetCreated = !(await this.knownInQueue(org, plan.target, pointers, ahead));
      if (targetCreated) {
        ops.push({ type: 'put', key: userKey(org, plan.target), value: { id: plan.target } satisfies UserRecord });
        users.push(plan.target);
      }
      const aliasUpdates: Array<readonly [string, string]> = [];
      for (const index of plan.rebind) {
        const alias = given[index] as AliasBody;
        const previous = pointers[index] ?? null;
        if (previous === plan.target) continue;
        if (previous !== null) ops.push({ type: 'del', key: userAliasKey(org, previous, alias.tag, alias.id) });
        const pointer: AliasPointer =
          alias.priority === undefined ? { user_id: plan.target } : { user_id: plan.target, priority: alias.priority };
        ops.push({ type: 'put', key: aliasKey(org, alias.tag, alias.id), value: pointer });
        const entry: UserAliasEntry = { id: alias.id, tag: alias.tag };
        ops.push({ type: 'put', key: userAliasKey(org, plan.target, alias.tag, alias.id), value: entry });
        aliasUpdates.push([aliasKey(org, alias.tag, alias.id), plan.target]);
      }
      if (ops.length > 0) await this.commit(org, ops, aliasUpdates, users);
      return plan.result(targetCreated);
    });
  }

  /** Writes one batch, then updates the caches in the same synchronous step. Call inside the queue. */
  private async commit(
    org: string,
    ops: readonly BatchOp[],
    aliasUpdates: ReadonlyArray<readonly [string, string]>,
    users: readonly string[],
  ): Promise<void> {
    await this.store.batch(ops);
    this.committed(org, aliasUpdates, users);
  }

  /** After a commit of alias pointers and users (here or by a caller's batch): the caches learn them. */
  private committed(org: string, aliasUpdates: ReadonlyArray<readonly [string, string]>, users: readonly string[]): void {
    this.generation++;
    for (const [storeKey, user] of aliasUpdates) this.aliasCache.set(storeKey, user);
    for (const user of users) this.userCache.set(userKey(org, user), true);
  }

  private cachedPointers(org: string, aliases: readonly AliasRef[]): CachedPointers {
    return aliases.map((alias) => this.aliasCache.get(aliasKey(org, alias.tag, alias.id)));
  }

  /** The store keys a queued call may read that the caches do not know: its aliases', and the user it names. */
  private uncachedKeys(org: string, aliases: readonly AliasRef[], cached: CachedPointers, named: string | undefined): string[] {
    const keys = uncachedAliasKeys(org, aliases, cached);
    if (named !== undefined && !this.userCache.has(userKey(org, named))) keys.push(userKey(org, named));
    return keys;
  }

  /** Pointers read inside the organization's queue: no write can interleave, so what is read is cached. */
  private async lookupInQueue(org: string, aliases: readonly AliasRef[], ahead: SharedRead | undefined): Promise<Pointers> {
    return this.lookup(org, aliases, () => true, ahead);
  }

  /** Pointers read outside the queue: cached only if no commit happened while the store was read. */
  private async lookupOutsideQueue(org: string, aliases: readonly AliasRef[]): Promise<Pointers> {
    const generation = this.generation;
    return this.lookup(org, aliases, () => generation === this.generation, undefined);
  }

  private async lookup(
    org: string,
    aliases: readonly AliasRef[],
    mayCache: () => boolean,
    ahead: SharedRead | undefined,
  ): Promise<Pointers> {
    const cached = this.cachedPointers(org, aliases);
    const missing = uncachedAliasKeys(org, aliases, cached);
    if (missing.length === 0) return cached as Pointers;
    const stored = await this.readKeys<AliasPointer>(missing, ahead);
    const cacheable = mayCache();
    const read = new Map<string, string | null>();
    missing.forEach((storeKey, index) => {
      const user = stored[index]?.user_id ?? null;
      read.set(storeKey, user);
      if (cacheable) this.aliasCache.set(storeKey, user);
    });
    return aliases.map(
      (alias, index) => cached[index] ?? read.get(aliasKey(org, alias.tag, alias.id)) ?? null,
    );
  }

  /**
   * Whether the user is known to exist without reading the store: cached, or pointed to by one of the aliases read
   * (then cached too, so that a later call naming the user by id reads nothing either).
   */
  private knownFromCache(org: string, user: string, pointers: Pointers): boolean {
    const key = userKey(org, user);
    if (this.userCache.has(key)) return true;
    if (!pointers.includes(user)) return false;
    this.userCache.set(key, true);
    return true;
  }

  /** Whether `u!` exists, read inside the queue (and cached when it does). A user some alias points to exists:
   * aliases are only ever pointed at recorded users. */
  private async knownInQueue(org: string, user: string, pointers: Pointers, ahead: SharedRead | undefined): Promise<boolean> {
    if (this.knownFromCache(org, user, pointers)) return true;
    const [record] = await this.readKeys<UserRecord>([userKey(org, user)], ahead);
    const found = record !== undefined;
    if (found) this.userCache.set(userKey(org, user), true);
    return found;
  }

  /** The keys' stored values: those read ahead while still current (read-ahead.ts), the others read now. */
  private async readKeys<T>(keys: readonly string[], ahead: SharedRead | undefined): Promise<Array<T | undefined>> {
    const early = await this.readAhead.valuesOf(ahead);
    const unread = early === undefined ? keys : keys.filter((key) => !early.has(key));
    if (unread.length === keys.length) return this.store.getMany<T>(keys);
    const fresh = new Map<string, T | undefined>();
    if (unread.length > 0) (await this.store.getMany<T>(unread)).forEach((value, index) => fresh.set(unread[index] as string, value));
    return keys.map((key) => (fresh.has(key) ? fresh.get(key) : (early?.get(key) as T | undefined)));
  }
}
