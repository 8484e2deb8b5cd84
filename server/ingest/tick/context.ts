// Imported data crossing to the workers (D27, E13, E14): the lookups a plan can make (its probes), a user's answers
// to them captured as plain, cloneable data, and that data turned back into the engine's SegmentContext.

import type { CohortDefinition, ConnectionRow, SegmentContext } from '../../../engine/api.js';
import { sameJson } from '../../../engine/same-json.js';

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

/**
 * The engine's context over captured data (probes the plan does not make answer false / no rows). `previous` (the
 * context the user's state was last decided with, engine UserState.context) is answered again when it was built from
 * the same data: its answers are then the new data's answers, and the same constant object lets the engine keep the
 * decisions that read imported data alone (engine/api.ts `constant`) instead of deciding them at every event.
 */
export function contextFromData(data: ContextData, previous?: SegmentContext): SegmentContext {
  if (data.segments.length === 0 && data.rows.length === 0) return NO_DATA;
  if (previous instanceof DataContext && previous.holds(data)) return previous;
  return new DataContext(data);
}

const segmentKey = (relation: Relation, provider: string, segment: string): string => `${relation}\u0000${provider}\u0000${segment}`;

/**
 * Bytes a context kept with a resident state holds, by estimate (D40: state/bytes.ts adds it to the state's): 0 for
 * the shared empty one.
 */
export function contextBytes(ctx: SegmentContext | undefined): number {
  return ctx instanceof DataContext ? ctx.bytes : 0;
}

/** A user's captured data as the engine asks it: built once, never changed, so constant. */
class DataContext implements SegmentContext {
  readonly constant = true;
  private readonly segments: ReadonlySet<string>;
  private readonly rows: ReadonlyMap<string, readonly ConnectionRow[]>;
  /** An estimate: the object, its set and map, each segment's key, each row and its properties (valueBytes). */
  readonly bytes: number;

  constructor(data: ContextData) {
    this.segments = new Set(data.segments.map(([relation, provider, segment]) => segmentKey(relation, provider, segment)));
    this.rows = new Map(data.rows);
    let bytes = 400;
    for (const key of this.segments) bytes += 48 + 2 * key.length;
    for (const [provider, rows] of data.rows) {
      bytes += 64 + 2 * provider.length;
      for (const row of rows) bytes += 64 + valueBytes(row.properties);
    }
    this.bytes = bytes;
  }

  inImportedSegment(relation: Relation, provider: string, segment: string): boolean {
    return this.segments.has(segmentKey(relation, provider, segment));
  }

  connectionRows(provider: string): readonly ConnectionRow[] {
    return this.rows.get(provider) ?? NO_ROWS;
  }

  /** Whether `data` answers every probe as this context does: the same segments, the same rows per provider. */
  holds(data: ContextData): boolean {
    if (data.segments.length !== this.segments.size || data.rows.length !== this.rows.size) return false;
    for (const [relation, provider, segment] of data.segments) if (!this.segments.has(segmentKey(relation, provider, segment))) return false;
    for (const [provider, rows] of data.rows) {
      const mine = this.rows.get(provider);
      if (mine === undefined || !sameRows(mine, rows)) return false;
    }
    return true;
  }
}

function sameRows(a: readonly ConnectionRow[], b: readonly ConnectionRow[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as ConnectionRow;
    const y = b[i] as ConnectionRow;
    if (x.time !== y.time || !sameJson(x.properties, y.properties)) return false;
  }
  return true;
}

/** A rough size of a decoded value: 8 per number or flag, twice a string's length, 16 a slot in a container; never throws. */
function valueBytes(value: unknown, depth = 0): number {
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (typeof value !== 'object' || value === null) return 8;
  if (depth > 32) return 16;
  let bytes = 32;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) bytes += 8 + valueBytes(item, depth + 1);
    return bytes;
  }
  if (ArrayBuffer.isView(value)) return bytes + value.byteLength;
  for (const key of Object.keys(value)) bytes += 16 + 2 * key.length + valueBytes((value as Record<string, unknown>)[key], depth + 1);
  return bytes;
}

const NO_ROWS: readonly ConnectionRow[] = Object.freeze([]);
/** Shared by every user without imported data, and constant (engine/api.ts): decisions that read it alone stand. */
const NO_DATA: SegmentContext = { inImportedSegment: () => false, connectionRows: () => NO_ROWS, constant: true };
