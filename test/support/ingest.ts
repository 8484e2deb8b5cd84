// Test fixtures of the ingest pipeline: cohorts from query JSON (validated ASTs), a plan source and a context
// source over maps, event factories, and temp LevelDB directories.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY_CONTEXT, validateQuery } from '../../engine/index.js';
import type { CohortDefinition, ConnectionRow, SegmentContext } from '../../engine/api.js';
import type { ContextSource, NewEvent, PlanSource } from '../../server/ingest/types.js';

export const ORG = 'a0000000-0000-4000-8000-00000000a001';
export const T0 = Date.parse('2026-11-20T12:00:00.000Z');

/** A cohort from the query's JSON, validated as the cohort registry would. */
export function cohort(code: number, query: unknown): CohortDefinition {
  const result = validateQuery(query);
  if (!result.ok) throw new Error(`invalid test query: ${JSON.stringify(result.problems)}`);
  return { code, query: result.query };
}

/** Each organization's cohorts; `set` bumps the version as the cohort registry does. */
export class MapPlans implements PlanSource {
  private readonly plans = new Map<string, { version: number; cohorts: readonly CohortDefinition[] }>();

  constructor(org?: string, cohorts?: readonly CohortDefinition[]) {
    if (org !== undefined && cohorts !== undefined) this.set(org, cohorts);
  }

  set(org: string, cohorts: readonly CohortDefinition[]): void {
    this.plans.set(org, { version: (this.plans.get(org)?.version ?? 0) + 1, cohorts });
  }

  planFor(org: string): { version: number; cohorts: readonly CohortDefinition[] } {
    return this.plans.get(org) ?? { version: 0, cohorts: [] };
  }
}

/** Imported segments and rows per user (D27), answered as the imports area would. */
export class MapContexts implements ContextSource {
  private readonly segments = new Map<string, Set<string>>();
  private readonly rows = new Map<string, Map<string, ConnectionRow[]>>();

  /** Moves with every change (ContextSource.contextEpoch), as the imports' context cache's does. */
  private epoch = 0;

  contextEpoch(): number {
    return this.epoch;
  }

  addSegment(org: string, user: string, relation: '2nd' | '3rd', provider: string, segment: string): void {
    this.epoch++;
    const id = `${org}!${user}`;
    const set = this.segments.get(id) ?? new Set<string>();
    set.add(`${relation}!${provider}!${segment}`);
    this.segments.set(id, set);
  }

  addRow(org: string, user: string, provider: string, row: ConnectionRow): void {
    this.epoch++;
    const id = `${org}!${user}`;
    const byProvider = this.rows.get(id) ?? new Map<string, ConnectionRow[]>();
    byProvider.set(provider, [...(byProvider.get(provider) ?? []), row]);
    this.rows.set(id, byProvider);
  }

  async contextFor(org: string, user: string): Promise<SegmentContext> {
    const id = `${org}!${user}`;
    const segments = this.segments.get(id);
    const rows = this.rows.get(id);
    if (segments === undefined && rows === undefined) return EMPTY_CONTEXT;
    return {
      inImportedSegment: (relation, provider, segment) => segments?.has(`${relation}!${provider}!${segment}`) ?? false,
      connectionRows: (provider) => rows?.get(provider) ?? [],
    };
  }
}

/** A user id (UUID form) numbered `n`. */
export function userId(n: number): string {
  return `b0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** An event id (UUID form) numbered `n`. */
export function eventId(n: number): string {
  return `e0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** Event number `n`: id from n, time T0 + n seconds unless `extra.timeMs` says otherwise. */
export function event(n: number, name = 'Pageview', extra: Partial<NewEvent> = {}): NewEvent {
  const timeMs = extra.timeMs ?? T0 + n * 1000;
  return { id: eventId(n), name, properties: { n }, ...extra, time: new Date(timeMs).toISOString(), timeMs };
}

export interface TempDir {
  readonly path: string;
  remove(): Promise<void>;
}

export async function tempDir(): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), 'audience-ingest-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
