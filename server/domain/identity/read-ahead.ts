// Store reads of identity calls that wait in their organization's queue (D28), issued when a call arrives instead of
// when its turn comes, and shared: the calls of one turn of the event loop read their keys in ONE getMany. Without
// it, calls whose aliases the cache does not know (after a restart, or past the cache's size) each read the store in
// turn, one after another, so an organization's calls were as slow as that many reads in a row, and each read woke a
// pool thread of its own (on this VM ~20 µs of the main thread's time per wake-up, more than the read itself).
//
// A value read ahead stands for the store at the call's turn only if no identity commit happened since the read was
// issued (the owner's generation, bumped after every commit): every commit before the read is in what it read, and a
// commit after it changes the generation, so the call then reads again. Calls only commit at the head of their
// queue, so nothing commits between that check and the call's decision.

import type { Store } from '../../store/contract.js';

/** One shared read: the keys asked before it was issued, and what the store held for each. */
export interface SharedRead {
  readonly keys: Set<string>;
  /** The generation when the read was issued (-1 before). */
  generation: number;
  /** Each asked key's stored value (undefined: absent). Never rejects: a failed read resolves undefined. */
  readonly values: Promise<Map<string, unknown> | undefined>;
}

export class ReadAhead {
  private next: SharedRead | undefined;

  constructor(
    private readonly store: Store,
    /** The owner's commit counter. */
    private readonly generation: () => number,
  ) {}

  /** Adds `keys` to the read issued at the end of this turn of the event loop; undefined when there are none. */
  ask(keys: readonly string[]): SharedRead | undefined {
    if (keys.length === 0) return undefined;
    let read = this.next;
    if (read === undefined) {
      let issue!: () => void;
      const asked = new Set<string>();
      const started: SharedRead = {
        keys: asked,
        generation: -1,
        values: new Promise<Map<string, unknown> | undefined>((resolve) => {
          issue = () => {
            if (this.next === started) this.next = undefined;
            started.generation = this.generation();
            const list = [...asked];
            // A failed read (rejected or thrown) answers nothing: the calls read for themselves and meet the error there.
            let reading: Promise<unknown[]>;
            try {
              reading = this.store.getMany(list);
            } catch {
              reading = Promise.reject(new Error('read failed'));
            }
            reading.then(
              (values) => resolve(new Map(list.map((key, index) => [key, values[index]]))),
              () => resolve(undefined),
            );
          };
        }),
      };
      setImmediate(issue);
      this.next = started;
      read = started;
    }
    for (const key of keys) read.keys.add(key);
    return read;
  }

  /** What `read` found, if it still holds (no commit since it was issued); undefined otherwise. */
  async valuesOf(read: SharedRead | undefined): Promise<Map<string, unknown> | undefined> {
    if (read === undefined) return undefined;
    const values = await read.values;
    return values !== undefined && read.generation === this.generation() ? values : undefined;
  }
}
