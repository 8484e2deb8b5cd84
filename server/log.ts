// Logging that never stops the server (operations.md: "a failing log destination never stops the server") and that
// does not repeat itself: a failure that keeps happening (every tick while the disk is full) is logged once, with its
// stack, then as one line with the count of repeats when the burst ends (or every so often while it lasts).

import { writeSync } from 'node:fs';

/**
 * A writer for process.stderr / process.stdout whose failures are dropped: an 'error' on the stream (EPIPE, ENOSPC
 * when it is a file on a full disk) is handled, a write that throws is caught, and once the stream has given up
 * (destroyed) the descriptor is written directly, so that lines come back once the destination works again.
 */
export function safeWriter(stream: NodeJS.WritableStream & { readonly fd?: number; readonly destroyed?: boolean }): (text: string) => void {
  stream.on('error', () => undefined); // the failed line is dropped
  return (text) => {
    try {
      if (stream.destroyed !== true) stream.write(text);
      else if (stream.fd !== undefined) writeSync(stream.fd, text);
    } catch {
      // dropped
    }
  };
}

export interface RepeatOptions {
  /** A burst ends after this long without a repeat; its count is logged then. Default 10 s. */
  readonly quietMs?: number;
  /** While a burst lasts, its count is logged at a repeat at least this long after the last report. Default 60 s. */
  readonly reportEveryMs?: number;
  readonly now?: () => number;
}

export interface RepeatLog {
  (line: string): void;
  /** Logs the count of every burst still open (at close). */
  flush(): void;
}

interface Burst {
  readonly label: string;
  repeats: number;
  reportedAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const MAX_BURSTS = 64;

/**
 * Wraps a log: a line of a kind already seen in the current burst is counted instead of logged. The kind of a line is
 * its first line with numbers and ids blanked (partitions, item counts, request ids differ between repeats); the
 * first line of a burst is logged whole (stack included), the repeats as "N more failure(s) of the same kind: ...".
 * A log that throws is ignored.
 */
export function collapseRepeats(log: (line: string) => void, options: RepeatOptions = {}): RepeatLog {
  const quietMs = options.quietMs ?? 10_000;
  const reportEveryMs = options.reportEveryMs ?? 60_000;
  const now = options.now ?? Date.now;
  const bursts = new Map<string, Burst>();
  const emit = (line: string): void => {
    try {
      log(line);
    } catch {
      // dropped
    }
  };
  const report = (burst: Burst): void => {
    if (burst.repeats > 0) emit(`${burst.repeats} more failure(s) of the same kind: ${burst.label}`);
    burst.repeats = 0;
    burst.reportedAt = now();
  };
  const end = (key: string): void => {
    const burst = bursts.get(key);
    if (burst === undefined) return;
    bursts.delete(key);
    if (burst.timer !== undefined) clearTimeout(burst.timer);
    report(burst);
  };
  const write = (line: string): void => {
    const first = line.split('\n', 1)[0] as string;
    const key = kindOf(first);
    let burst = bursts.get(key);
    if (burst === undefined) {
      emit(line);
      if (bursts.size >= MAX_BURSTS) end(bursts.keys().next().value as string);
      burst = { label: first.length > 300 ? `${first.slice(0, 300)}...` : first, repeats: 0, reportedAt: now(), timer: undefined };
      bursts.set(key, burst);
    } else {
      burst.repeats += 1;
      if (now() - burst.reportedAt >= reportEveryMs) report(burst);
      if (burst.timer !== undefined) clearTimeout(burst.timer);
    }
    burst.timer = setTimeout(() => end(key), quietMs);
    burst.timer.unref?.();
  };
  return Object.assign(write, { flush: () => [...bursts.keys()].forEach(end) });
}

function kindOf(line: string): string {
  return line.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '#').replace(/\d+/g, '#');
}

export interface CoalescedWriter {
  (text: string): void;
  /** Writes what is held now (at close, at exit). */
  flush(): void;
}

/**
 * Holds the lines written during one turn of the event loop and writes them as one string at the next check phase
 * (setImmediate): a group commit answers its requests in one turn, and one write per access-log line cost the main
 * thread a system call per request. Order is kept; `flush` writes at once (close, process exit).
 */
export function coalesceLines(write: (text: string) => void): CoalescedWriter {
  let held: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (held.length === 0) return;
    const text = held.length === 1 ? (held[0] as string) : held.join('');
    held = [];
    write(text);
  };
  const coalesced = (text: string): void => {
    held.push(text);
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  coalesced.flush = flush;
  return coalesced;
}
