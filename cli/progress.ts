// A progress bar for long CLI operations (bulk loads): drawn on stderr when stdout is a terminal, silent otherwise,
// so redirected or --json output stays clean.

import type { CliIo } from './io.js';

export interface Progress {
  /** `done` out of the total given at start (bytes, lines, ...); `detail` is shown after the bar. */
  update(done: number, detail: string): void;
  /** Clears the bar (again harmless). */
  finish(): void;
}

const WIDTH = 30;
const REDRAW_MS = 100;

export function startProgress(io: CliIo, total: number, label: string, now: () => number = Date.now): Progress {
  if (!io.isTTY) return { update: () => undefined, finish: () => undefined };
  let lastDraw = -Infinity;
  let drawn = false;
  return {
    update(done, detail) {
      const time = now();
      if (time - lastDraw < REDRAW_MS && done < total) return;
      lastDraw = time;
      drawn = true;
      io.stderr(`\r\x1b[2K${renderBar(label, done, total, detail)}`);
    },
    finish() {
      if (drawn) io.stderr('\r\x1b[2K');
      drawn = false;
    },
  };
}

/** `label [#####.....]  50% detail`; a zero total counts as complete. */
export function renderBar(label: string, done: number, total: number, detail: string): string {
  const fraction = total <= 0 ? 1 : Math.min(1, Math.max(0, done / total));
  const filled = Math.round(fraction * WIDTH);
  const percent = String(Math.floor(fraction * 100)).padStart(3);
  return `${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${percent}% ${detail}`.trimEnd();
}

/**
 * `1,200 lines/s, ETA 8 s` for a load `fraction` done after `count` items since `startedMs`: the rate so far and the
 * time left at that rate (no ETA before there is a rate, or once done).
 */
export function pace(fraction: number, count: number, startedMs: number, nowMs: number): string {
  const seconds = (nowMs - startedMs) / 1000;
  if (seconds <= 0 || count <= 0) return '';
  const rate = `${Math.round(count / seconds).toLocaleString('en')} lines/s`;
  if (fraction <= 0 || fraction >= 1) return rate;
  const left = Math.round((seconds * (1 - fraction)) / fraction);
  return `${rate}, ETA ${left >= 120 ? `${Math.round(left / 60)} min` : `${left} s`}`;
}
