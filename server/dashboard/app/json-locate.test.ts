// The query editor's locator: the span of the value a D18 path names in JSON text, keys and indexes alike.

import { describe, expect, it } from 'vitest';
import { locate, pathSteps } from './json-locate.js';

const TEXT = JSON.stringify({ and: [{ event: 'Pageview' }, { or: [{ event: 'Buy', where: { property: 'properties.sku', condition: { contain: 'a' } } }] }] }, null, 2);
const at = (path: string): string | undefined => {
  const span = locate(TEXT, pathSteps(path));
  return span === undefined ? undefined : TEXT.slice(span.start, span.end);
};

describe('locate', () => {
  it('finds nested values by key and index, the root, and nothing for a path that is not there', () => {
    expect(pathSteps('query.and[1].or[0].where.condition')).toEqual(['and', 1, 'or', 0, 'where', 'condition']);
    expect(JSON.parse(at('query.and[1].or[0].where.condition') as string)).toEqual({ contain: 'a' });
    expect(at('query.and[0].event')).toBe('"Pageview"');
    expect(JSON.parse(at('query') as string)).toEqual(JSON.parse(TEXT));
    expect(at('query.and[2]')).toBeUndefined();
    expect(at('query.or')).toBeUndefined();
  });
});
