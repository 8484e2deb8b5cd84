// bench/where-reads.ts: the `where` predicates the generated hooks read per event, counted for this build or for
// another one's compiled modules (`--dist`).

import { describe, expect, it } from 'vitest';
import { countWhereReads } from '../../bench/where-reads.js';

describe('where reads bench', () => {
  it('counts the predicates read per event, the same for the sources and for their compiled build in dist/', async () => {
    const options = { users: 40, events: 15, seed: 42 };
    const sources = await countWhereReads(options);
    // The sample plan's events each meet several groups with a `where` (bench/README.md's engine section).
    expect(sources).toBeGreaterThan(1);
    expect(sources).toBeLessThan(100);
    expect(await countWhereReads(options, 'dist')).toBe(sources);
  });
});
