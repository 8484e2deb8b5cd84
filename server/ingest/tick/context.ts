// Imported data crossing to the workers (D27, E13, E14): the lookups a plan can make (its probes), a user's answers
// to them captured as plain, cloneable data, and that data turned back into the engine's SegmentContext.

import type { CohortDefinition, ConnectionRow, SegmentContext } from '../../../engine/api.js';

export type Relation = '2nd' | '3rd';

/** What a plan can ask the context: imported segments by (relation, provider, segment), rows by provider. */
export interface ContextProbes {
  readonly segments: readonly (readonly [Relation, string, string])[];
  readonly providers: readonly string[];
}

/** A user's answers to a plan's probes: the segments the user is in, and the user's rows per provider. */
export interface ContextData {
  readonly segments: readonly (readonly [Relation, string, string])[];
  readonly rows: readonly (readonly [string, readonly ConnectionRow[]])[];
}

export const EMPTY_CONTEXT_DATA: ContextData = Object.freeze({ segments: [], rows: [] });

/** Every imported-data lookup the cohorts' membership and connections clauses make. */
export function probesOf(cohorts: readonly CohortDefinition[]): ContextProbes {
  const segments = new Map<string, readonly [Relation, string, string]>();
  const providers = new Set<string>();
  for (const cohort of cohorts) {
    for (const group of cohort.query.and) {
      for (const clause of group.or) {
        if (clause.kind === 'membership') {
          const relation: Relation = clause.op.endsWith('third_party_segment') ? '3rd' : '2nd';
          segments.set(`${relation}\u0000${clause.provider}\u0000${clause.segment}`, [relation, clause.provider, clause.segment]);
        } else if (clause.kind === 'connections') {
          providers.add(clause.provider);
        }
      }
    }
  }
  return { segments: [...segments.values()], providers: [...providers] };
}

export function hasProbes(probes: ContextProbes): boolean {
  return probes.segments.length > 0 || probes.providers.length > 0;
}

/** Asks `ctx` every probe and keeps the answers (rows copied into plain objects). */
export function captureContext(ctx: SegmentContext, probes: ContextProbes): ContextData {
  let segments: (readonly [Relation, string, string])[] | undefined;
  for (const probe of probes.segments) {
    if (ctx.inImportedSegment(probe[0], probe[1], probe[2])) (segments ??= []).push(probe);
  }
  let rows: (readonly [string, readonly ConnectionRow[]])[] | undefined;
  for (const provider of probes.providers) {
    const found = ctx.connectionRows(provider);
    if (found.length > 0) (rows ??= []).push([provider, found.map((row) => ({ time: row.time, properties: row.properties }))]);
  }
  // Most users have no imported data: they share the empty answers.
  if (segments === undefined && rows === undefined) return EMPTY_CONTEXT_DATA;
  return { segments: segments ?? [], rows: rows ?? [] };
}

/** The engine's context over captured data (probes the plan does not make answer false / no rows). */
export function contextFromData(data: ContextData): SegmentContext {
  if (data.segments.length === 0 && data.rows.length === 0) return NO_DATA;
  const segments = new Set(data.segments.map(([relation, provider, segment]) => `${relation}\u0000${provider}\u0000${segment}`));
  const rows = new Map(data.rows);
  return {
    inImportedSegment: (relation, provider, segment) => segments.has(`${relation}\u0000${provider}\u0000${segment}`),
    connectionRows: (provider) => rows.get(provider) ?? NO_ROWS,
  };
}

const NO_ROWS: readonly ConnectionRow[] = Object.freeze([]);
/** Shared by every user without imported data, and constant (engine/api.ts): decisions that read it alone stand. */
const NO_DATA: SegmentContext = { inImportedSegment: () => false, connectionRows: () => NO_ROWS, constant: true };
