// Imported data crossing to workers (E13, E14): a plan's probes, captured answers, and the context rebuilt from them.

import { describe, expect, it } from 'vitest';
import { EMPTY_CONTEXT_DATA, captureContext, contextBytes, contextFromData, hasProbes, probesOf, type ContextData } from './context.js';
import { MapContexts, ORG, cohort } from '../../../test/support/ingest.js';

const COHORTS = [
  cohort(1, { or: [{ in_third_party_segment: { provider: 'acme', segment: 'sports' } }, { not_in_second_party_segment: { provider: 'own', segment: 'vip' } }] }),
  cohort(2, { in_connections_import_segment: { provider: 'crm' } }),
  cohort(3, { event: 'Pageview' }),
];

describe('context probes and captured data', () => {
  it('probes are the segments and providers the cohorts name, once each', () => {
    const probes = probesOf([...COHORTS, COHORTS[1] as (typeof COHORTS)[number]]);
    expect(probes.segments).toEqual([
      ['3rd', 'acme', 'sports'],
      ['2nd', 'own', 'vip'],
    ]);
    expect(probes.providers).toEqual(['crm']);
    expect(hasProbes(probesOf([COHORTS[2] as (typeof COHORTS)[number]]))).toBe(false);
  });

  it('the rebuilt context answers the probes as the source did, and nothing else', async () => {
    const contexts = new MapContexts();
    contexts.addSegment(ORG, 'u', '3rd', 'acme', 'sports');
    contexts.addSegment(ORG, 'u', '3rd', 'acme', 'unprobed');
    contexts.addRow(ORG, 'u', 'crm', { time: 5, properties: { plan: 'pro' } });
    contexts.addRow(ORG, 'u', 'other', { time: 6, properties: {} });
    const data = captureContext(await contexts.contextFor(ORG, 'u'), probesOf(COHORTS));
    const ctx = contextFromData(structuredClone(data));
    expect(ctx.inImportedSegment('3rd', 'acme', 'sports')).toBe(true);
    expect(ctx.inImportedSegment('2nd', 'own', 'vip')).toBe(false);
    expect(ctx.inImportedSegment('3rd', 'acme', 'unprobed')).toBe(false);
    expect(ctx.connectionRows('crm')).toEqual([{ time: 5, properties: { plan: 'pro' } }]);
    expect(ctx.connectionRows('other')).toEqual([]);
    expect(contextFromData(EMPTY_CONTEXT_DATA).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
  });
});

describe('a context rebuilt from the same data', () => {
  const data = (): ContextData => ({
    segments: [
      ['3rd', 'acme', 'sports'],
      ['2nd', 'own', 'vip'],
    ],
    rows: [['crm', [{ time: 5, properties: { plan: 'pro', tags: ['a', { b: null }] } }]]],
  });

  it('is the previous object when the data is equal, a new constant one otherwise', () => {
    const first = contextFromData(data());
    expect(first.constant).toBe(true);
    expect(contextFromData(data(), first)).toBe(first);
    const reordered: ContextData = { ...data(), rows: [['crm', [{ time: 5, properties: { tags: ['a', { b: null }], plan: 'pro' } }]]] };
    expect(contextFromData(reordered, first)).toBe(first);
    const changes: ContextData[] = [
      { ...data(), segments: data().segments.slice(1) },
      { ...data(), segments: [...data().segments, ['3rd', 'acme', 'golf']] },
      { ...data(), segments: [['3rd', 'acme', 'golf'], ['2nd', 'own', 'vip']] },
      { ...data(), rows: [] },
      { ...data(), rows: [['erp', data().rows[0]![1]]] },
      { ...data(), rows: [['crm', [{ time: 6, properties: { plan: 'pro', tags: ['a', { b: null }] } }]]] },
      { ...data(), rows: [['crm', [{ time: 5, properties: { plan: 'pro', tags: ['a', { b: 0 }] } }]]] },
      { ...data(), rows: [['crm', [{ time: 5, properties: { plan: 'pro', tags: ['a'] } }]]] },
      { ...data(), rows: [['crm', [...data().rows[0]![1], { time: 7, properties: {} }]]] },
    ];
    for (const changed of changes) {
      const next = contextFromData(changed, first);
      expect(next).not.toBe(first);
      expect(next.constant).toBe(true);
    }
    // No data: the shared empty context, whatever came before; and no previous of another kind is taken.
    expect(contextFromData(EMPTY_CONTEXT_DATA, first).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
    const foreign = { inImportedSegment: () => true, connectionRows: () => [], constant: true };
    expect(contextFromData(data(), foreign)).not.toBe(foreign);
  });

  it('estimates its bytes from whatever the rows hold, without throwing', () => {
    const small = contextBytes(contextFromData(data()));
    const big = contextBytes(contextFromData({ ...data(), rows: [['crm', [{ time: 5, properties: { plan: 'x'.repeat(1000), n: 2n ** 70n, bin: new Uint8Array(64) } }]]] }));
    expect(small).toBeGreaterThan(400);
    expect(big).toBeGreaterThan(small + 1500);
    expect(contextBytes(contextFromData(EMPTY_CONTEXT_DATA))).toBe(0);
    expect(contextBytes(undefined)).toBe(0);
  });
});
