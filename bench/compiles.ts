// How much optimizing-compiler work a build's backfill bench makes V8 do: bench/backfill.js run with `--trace-opt
// --trace-deopt` (and serve's Node options), its TurboFan compiles counted per function from the trace, with the
// time each took (V8's own figure, on its background threads, which share this machine's two cores with the main
// thread and the owner) and the deoptimizations. A count, not a rate: it shows what a change to the code's shape
// does apart from the VM's noise (a function compiled again and again while the same work runs is CPU taken from
// the rest). `--dist DIR` runs another build (a copy of dist/, as bench/backfill-ab.ts takes); several run in turn.
// A build whose bench marks its sweeps in the trace (bench/backfill.ts markTrace) is also counted sweep by sweep: the
// first sweep of the process compiles what the sweep alone runs, the later ones what is left. Other arguments go to
// bench/backfill.js. Not part of `npm run bench`.
// Run: npm run build && node dist/bench/compiles.js [--dist DIR]... [--top N] [backfill.js arguments]

import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SERVE_NODE_OPTIONS } from '../cli/node-options.js';
import { TRACE_MARK, TRACE_MARKS_ENV } from './backfill.js';

/** One function's TurboFan work over the run. */
export interface FunctionCompiles {
  readonly name: string;
  readonly compiles: number;
  readonly ms: number;
  readonly deopts: number;
}

export interface CompileCounts {
  readonly compiles: number;
  /** The sum of the compiles' own times (V8's middle figure: the compile job, off the main thread). */
  readonly ms: number;
  readonly deopts: number;
  /** Functions compiled more than once, most compiles first (a function is its name and shared-info address). */
  readonly repeated: readonly FunctionCompiles[];
}

const COMPILED = /^\[completed compiling 0x[0-9a-f]+ <JSFunction ([^(]*)\(sfi = (0x[0-9a-f]+)\)> \(target TURBOFAN\)( OSR)? - took [0-9.]+, ([0-9.]+), [0-9.]+ ms\]/;
const DEOPT = /^\[bailout \(kind: .*?\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction [^(]*\(sfi = (0x[0-9a-f]+)\)>/;

/** Counts a `--trace-opt --trace-deopt` output's TurboFan compiles (on-stack replacements apart) and deoptimizations. */
export function countCompiles(trace: string): CompileCounts {
  const byFunction = new Map<string, { name: string; compiles: number; ms: number; deopts: number }>();
  const entry = (sfi: string, name: string): { name: string; compiles: number; ms: number; deopts: number } => {
    let found = byFunction.get(sfi);
    if (found === undefined) {
      found = { name, compiles: 0, ms: 0, deopts: 0 };
      byFunction.set(sfi, found);
    }
    return found;
  };
  let compiles = 0;
  let ms = 0;
  let deopts = 0;
  for (const line of trace.split('\n')) {
    const compiled = COMPILED.exec(line);
    if (compiled !== null) {
      const took = Number(compiled[4]);
      compiles++;
      ms += took;
      if (compiled[3] !== undefined) continue;
      const found = entry(compiled[2] as string, (compiled[1] as string).trim() || '(anonymous)');
      found.compiles++;
      found.ms += took;
      continue;
    }
    const deopt = DEOPT.exec(line);
    if (deopt === null) continue;
    deopts++;
    const found = byFunction.get(deopt[1] as string);
    if (found !== undefined) found.deopts++;
  }
  const repeated = [...byFunction.values()].filter((f) => f.compiles > 1).sort((a, b) => b.compiles - a.compiles || b.ms - a.ms);
  return { compiles, ms: Math.round(ms), deopts, repeated: repeated.map((f) => ({ ...f, ms: Math.round(f.ms) })) };
}

/** A marked stretch of the trace: the sweep's label (`first`, `later-1`, ...) and the trace lines between its marks. */
export interface SweepTrace {
  readonly label: string;
  readonly trace: string;
}

const MARK = new RegExp(`^DebugPrint: .*${TRACE_MARK}([\\w-]+):(start|end)`);

/** The stretches of `trace` between each sweep's start and end marks, in order (none for a build without marks). */
export function sweepTraces(trace: string): SweepTrace[] {
  const out: SweepTrace[] = [];
  let open: { label: string; lines: string[] } | undefined;
  for (const line of trace.split('\n')) {
    const mark = MARK.exec(line);
    if (mark === null) {
      open?.lines.push(line);
      continue;
    }
    const label = mark[1] as string;
    if (mark[2] === 'start') open = { label, lines: [] };
    else if (open?.label === label) {
      out.push({ label, trace: open.lines.join('\n') });
      open = undefined;
    }
  }
  return out;
}

/** Runs `dist`'s bench/backfill.js under the trace; its counts (the whole run's, and each marked sweep's) and its JSON result. */
export function traceBackfill(
  dist: string,
  args: readonly string[],
): Promise<{ counts: CompileCounts; sweeps: { label: string; counts: CompileCounts }[]; result: Record<string, unknown> }> {
  const script = join(dist, 'bench', 'backfill.js');
  const child = spawn(process.execPath, [...SERVE_NODE_OPTIONS, '--trace-opt', '--trace-deopt', '--allow-natives-syntax', script, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, [TRACE_MARKS_ENV]: '1' },
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => void (output += text));
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('exit', (code) => {
      if (code !== 0) return fail(new Error(`${script} exited with ${code}`));
      // The bench's JSON is the output's last lines, from the last line that is only `{`.
      const start = output.lastIndexOf('\n{\n');
      const sweeps = sweepTraces(output).map(({ label, trace }) => ({ label, counts: countCompiles(trace) }));
      done({ counts: countCompiles(output), sweeps, result: JSON.parse(output.slice(start + 1)) as Record<string, unknown> });
    });
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const dists: string[] = [];
  const rest: string[] = [];
  let top = 12;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--dist' && argv[i + 1] !== undefined) dists.push(resolve(argv[++i] as string));
    else if (arg === '--top' && argv[i + 1] !== undefined) top = Number(argv[++i]);
    else rest.push(arg);
  }
  if (dists.length === 0) dists.push(resolve(dirname(fileURLToPath(import.meta.url)), '..'));
  for (const dist of dists) {
    const { counts, sweeps, result } = await traceBackfill(dist, rest);
    const later = result.laterSweep as Record<string, unknown> | undefined;
    console.log(`${dist}: ${counts.compiles} TurboFan compiles, ${counts.ms} ms, ${counts.deopts} deoptimizations; first sweep ${String(result.replayedEventsPerSecond)} events/s, later ${String(later?.replayedEventsPerSecond)} (traced: slower than untraced)`);
    const repeated = (list: readonly FunctionCompiles[]): void => {
      console.log('  compiled more than once (compiles, ms, deoptimizations):');
      for (const f of list.slice(0, top)) console.log(`  ${String(f.compiles).padStart(4)} ${String(f.ms).padStart(6)} ms ${String(f.deopts).padStart(4)}  ${f.name}`);
    };
    repeated(counts.repeated);
    if (sweeps.length === 0) console.log('  (this build does not mark its sweeps in the trace)');
    for (const sweep of sweeps) console.log(`  during the ${sweep.label} sweep: ${sweep.counts.compiles} compiles, ${sweep.counts.ms} ms, ${sweep.counts.deopts} deoptimizations`);
    const first = sweeps.find((sweep) => sweep.label === 'first');
    if (first !== undefined) {
      console.log('  during the first sweep,');
      repeated(first.counts.repeated);
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
