// Answers of the caller's context (E13, E14) shared by a plan's clauses within one segment / evaluateAt call: each
// distinct imported-segment question and each provider's rows are asked once per call, however many clauses ask.

import type { ConnectionRow, SegmentContext } from '../api.js';

/**
 * Per-plan memo. An answer is valid while `epoch` has not moved: every call moves it (`startCall`), and so does a
 * change of context object (a nested call with another context), so answers never outlive the call that asked.
 */
export class ContextMemo {
  private epoch = 1;
  private ctx: SegmentContext | undefined = undefined;
  private readonly segmentKeys = new Map<string, number>();
  private segmentEpochs = new Int32Array(0);
  private segmentAnswers = new Uint8Array(0);
  private readonly providerKeys = new Map<string, number>();
  private providerEpochs = new Int32Array(0);
  private providerRows: (readonly ConnectionRow[])[] = [];
  /**
   * Per provider: what connections clauses prepared from its current rows list, by clause slot (`preparedSlot`).
   * Kept per rows list identity (a list must not change once handed out), so clauses share one lookup per call.
   */
  private providerPrepared: unknown[][] = [];
  private readonly preparedByRows = new WeakMap<readonly ConnectionRow[], unknown[]>();
  private preparedSlots = 0;

  /** A new call: whatever was answered before may have changed (E20: re-evaluation brings new data). */
  startCall(): void {
    this.epoch = (this.epoch + 1) | 0;
    this.ctx = undefined;
  }

  /** The index of an imported-segment question (at compile time). */
  segmentIndex(relation: '2nd' | '3rd', provider: string, segment: string): number {
    const key = `${relation}\u0000${provider}\u0000${segment}`;
    let index = this.segmentKeys.get(key);
    if (index === undefined) {
      index = this.segmentKeys.size;
      this.segmentKeys.set(key, index);
      this.segmentEpochs = new Int32Array(index + 1);
      this.segmentAnswers = new Uint8Array(index + 1);
    }
    return index;
  }

  /** The index of a provider's rows (at compile time). */
  providerIndex(provider: string): number {
    let index = this.providerKeys.get(provider);
    if (index === undefined) {
      index = this.providerKeys.size;
      this.providerKeys.set(provider, index);
      this.providerEpochs = new Int32Array(index + 1);
      this.providerRows.push([]);
      this.providerPrepared.push([]);
    }
    return index;
  }

  /** A place for one connections clause's prepared rows (at compile time). */
  preparedSlot(): number {
    return this.preparedSlots++;
  }

  inImportedSegment(ctx: SegmentContext, index: number, relation: '2nd' | '3rd', provider: string, segment: string): boolean {
    this.follow(ctx);
    if (this.segmentEpochs[index] !== this.epoch) {
      this.segmentAnswers[index] = ctx.inImportedSegment(relation, provider, segment) ? 1 : 0;
      this.segmentEpochs[index] = this.epoch;
    }
    return this.segmentAnswers[index] === 1;
  }

  connectionRows(ctx: SegmentContext, index: number, provider: string): readonly ConnectionRow[] {
    this.follow(ctx);
    if (this.providerEpochs[index] !== this.epoch) {
      const rows = ctx.connectionRows(provider);
      if (rows !== this.providerRows[index]) {
        let prepared = this.preparedByRows.get(rows);
        if (prepared === undefined) {
          prepared = [];
          this.preparedByRows.set(rows, prepared);
        }
        this.providerPrepared[index] = prepared;
      }
      this.providerRows[index] = rows;
      this.providerEpochs[index] = this.epoch;
    }
    return this.providerRows[index] as readonly ConnectionRow[];
  }

  /** What the clauses prepared from provider `index`'s rows last returned by `connectionRows`, by clause slot. */
  preparedOf(index: number): unknown[] {
    return this.providerPrepared[index] as unknown[];
  }

  private follow(ctx: SegmentContext): void {
    if (ctx === this.ctx) return;
    this.ctx = ctx;
    this.epoch = (this.epoch + 1) | 0;
  }
}
