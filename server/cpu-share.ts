// How much CPU the whole process used between two looks, against the time between them: serve's idle passes
// (malloc-trim.ts, heap-compaction.ts) each look at it and run only when it was low.

export interface CpuShareOptions {
  /** The process's CPU time so far, in microseconds (tests). */
  readonly cpuMicros?: () => number;
  /** Monotonic time in milliseconds (tests). */
  readonly nowMs?: () => number;
}

/** One interval between looks: CPU milliseconds used (all threads) and wall milliseconds passed. */
export interface CpuUse {
  readonly cpuMs: number;
  readonly wallMs: number;
}

export class CpuShare {
  private readonly cpuMicros: () => number;
  private readonly nowMs: () => number;
  private lastCpu = 0;
  private lastLook = 0;

  constructor(options: CpuShareOptions = {}) {
    this.cpuMicros = options.cpuMicros ?? (() => {
      const used = process.cpuUsage();
      return used.user + used.system;
    });
    this.nowMs = options.nowMs ?? (() => performance.now());
    this.restart();
  }

  /** The use since the last look (or restart); the next interval starts now. */
  look(): CpuUse {
    const cpu = this.cpuMicros();
    const now = this.nowMs();
    const use = { cpuMs: (cpu - this.lastCpu) / 1000, wallMs: now - this.lastLook };
    this.lastCpu = cpu;
    this.lastLook = now;
    return use;
  }

  /** The next interval starts now (what ran before, a pass's own work, is not counted). */
  restart(): void {
    this.lastCpu = this.cpuMicros();
    this.lastLook = this.nowMs();
  }
}
