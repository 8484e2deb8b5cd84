// Bytes a piece of code allocates on the V8 heap, garbage included: from the heap's used size before and after each
// garbage collection while it runs (node:v8's GCProfiler), so a short-lived object counts although no snapshot would
// see it. Close for scavenges; a mark-compact's concurrent sweeping can free pages between the recorded points, so
// the figure can fall short when a run has many of them. For comparing builds and changes, not an exact count.

import { GCProfiler, getHeapStatistics } from 'node:v8';

/** What GCProfiler records of the heap (its objects name the fields in camelCase, unlike getHeapStatistics). */
interface RecordedHeap {
  readonly usedHeapSize: number;
}

export function heapAllocated<T>(fn: () => T): { readonly value: T; readonly bytes: number; readonly collections: number } {
  const profiler = new GCProfiler();
  let from = getHeapStatistics().used_heap_size;
  profiler.start();
  const value = fn();
  const end = getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  let bytes = 0;
  for (const gc of statistics) {
    bytes += (gc.beforeGC.heapStatistics as unknown as RecordedHeap).usedHeapSize - from;
    from = (gc.afterGC.heapStatistics as unknown as RecordedHeap).usedHeapSize;
  }
  return { value, bytes: bytes + end - from, collections: statistics.length };
}
