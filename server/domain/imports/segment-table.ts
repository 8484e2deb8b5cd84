// A staged view of one import's segments: reads fall through to the store, writes collect into one atomic batch,
// so that a single change and a batch of 5000 (D26) share the same checks and commit once.

import { alreadyExists } from '../../errors.js';
import type { BatchOp, Store } from '../../store/contract.js';
import { segmentCodeKey, segmentCountKey, segmentKey } from './keys.js';
import type { ValidNewSegment, ValidPatch } from './segment-body.js';
import type { SegmentRecord } from './types.js';

export class SegmentTable {
  /** null: known to be absent (never stored, or removed in this view). */
  private readonly byCode = new Map<string, SegmentRecord | null>();
  private readonly byId = new Map<string, SegmentRecord | null>();
  /** Ids of segments that were read from the store (rather than created in this view). */
  private readonly storedIds = new Set<string>();
  private readonly writes = new Map<string, BatchOp>();
  private countDelta = 0;
  /** Codes of stored segments removed in this view: their memberships must go before the commit. */
  readonly removedStoredCodes = new Set<string>();

  constructor(
    private readonly store: Store,
    readonly importId: string,
  ) {}

  async findByCode(code: string): Promise<SegmentRecord | undefined> {
    if (this.byCode.has(code)) return this.byCode.get(code) ?? undefined;
    const id = await this.store.get<string>(segmentCodeKey(this.importId, code));
    const segment = id === undefined ? undefined : await this.findById(id);
    if (segment === undefined) this.byCode.set(code, null);
    return segment;
  }

  async findById(id: string): Promise<SegmentRecord | undefined> {
    if (this.byId.has(id)) return this.byId.get(id) ?? undefined;
    const segment = await this.store.get<SegmentRecord>(segmentKey(this.importId, id));
    this.byId.set(id, segment ?? null);
    if (segment !== undefined) {
      this.storedIds.add(id);
      this.byCode.set(segment.code, segment);
    }
    return segment;
  }

  /** D26: the code is unique within the import (409 code 4000 otherwise). */
  async create(fields: ValidNewSegment, id: string, updatedAt: string): Promise<SegmentRecord> {
    if ((await this.findByCode(fields.code)) !== undefined) {
      throw alreadyExists(`a segment with code ${JSON.stringify(fields.code)} exists in this import`);
    }
    const segment: SegmentRecord = {
      id,
      code: fields.code,
      name: fields.name,
      import_id: this.importId,
      description: fields.description,
      cpm: fields.cpm,
      categories: fields.categories,
      updated_at: updatedAt,
    };
    this.stage(segment);
    this.writes.set(segmentCodeKey(this.importId, segment.code), {
      type: 'put',
      key: segmentCodeKey(this.importId, segment.code),
      value: id,
    });
    this.countDelta += 1;
    return segment;
  }

  update(segment: SegmentRecord, patch: ValidPatch, updatedAt: string): SegmentRecord {
    const updated: SegmentRecord = {
      ...segment,
      ...(patch.name === undefined ? {} : { name: patch.name }),
      ...(patch.description === undefined ? {} : { description: patch.description }),
      ...(patch.cpm === undefined ? {} : { cpm: patch.cpm }),
      ...(patch.categories === undefined ? {} : { categories: patch.categories }),
      updated_at: updatedAt,
    };
    this.stage(updated);
    return updated;
  }

  remove(segment: SegmentRecord): void {
    this.byId.set(segment.id, null);
    this.byCode.set(segment.code, null);
    this.writes.set(segmentKey(this.importId, segment.id), { type: 'del', key: segmentKey(this.importId, segment.id) });
    this.writes.set(segmentCodeKey(this.importId, segment.code), {
      type: 'del',
      key: segmentCodeKey(this.importId, segment.code),
    });
    if (this.storedIds.has(segment.id)) this.removedStoredCodes.add(segment.code);
    this.countDelta -= 1;
  }

  /** Writes every staged change and the new segment count in one batch. Call under the import's lock. */
  async commit(): Promise<void> {
    if (this.writes.size === 0) return;
    const countKey = segmentCountKey(this.importId);
    const count = ((await this.store.get<number>(countKey)) ?? 0) + this.countDelta;
    await this.store.batch([...this.writes.values(), { type: 'put', key: countKey, value: count }]);
  }

  private stage(segment: SegmentRecord): void {
    this.byId.set(segment.id, segment);
    this.byCode.set(segment.code, segment);
    this.writes.set(segmentKey(this.importId, segment.id), {
      type: 'put',
      key: segmentKey(this.importId, segment.id),
      value: segment,
    });
  }
}
