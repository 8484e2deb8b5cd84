// Imported data crossing to workers (E13, E14): a plan's probes, captured answers, and the context rebuilt from them.

import { describe, expect, it } from 'vitest';
import { EMPTY_CONTEXT_DATA, captureContext, contextFromData, hasProbes, probesOf } from './context.js';
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
