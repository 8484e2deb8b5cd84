// D29 with one lookup per client id: the window of ids committed while a route's lookup is outstanding.

import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../domain/events/index.js';
import { RecentIds } from './recent-ids.js';

const record = (id: string, seq: number): StoredEvent => ({ id, user_id: 'u', name: 'Pageview', time: '2026-11-20T12:00:00.000Z', properties: {}, seq }) as StoredEvent;

describe('RecentIds', () => {
  it('answers an id committed after a hold began, not one committed before it, and keeps nothing without holds', () => {
    const ids = new RecentIds();
    ids.committed([['a', record('a', 1)]]);
    expect(ids.size).toBe(0);
    const hold = ids.hold();
    expect(ids.after(hold.mark, 'a')).toBeUndefined();
    ids.committed([['b', record('b', 2)]]);
    expect(ids.after(hold.mark, 'b')?.seq).toBe(2);
    hold.release();
    expect(ids.size).toBe(0);
    hold.release(); // twice is harmless
    expect(ids.after(hold.mark, 'b')).toBeUndefined();
  });

  it('prunes what the oldest outstanding hold can see in the store, and keeps what it cannot', () => {
    const ids = new RecentIds();
    const first = ids.hold();
    ids.committed([['x', record('x', 1)]]);
    const second = ids.hold();
    ids.committed([['y', record('y', 2)]]);
    expect(ids.after(first.mark, 'x')?.seq).toBe(1);
    expect(ids.after(second.mark, 'x')).toBeUndefined(); // committed before the second hold: its lookup saw it
    expect(ids.after(second.mark, 'y')?.seq).toBe(2);
    first.release();
    expect(ids.size).toBe(1);
    expect(ids.after(second.mark, 'y')?.seq).toBe(2);
    second.release();
    expect(ids.size).toBe(0);
  });
});
