// The engine's cost per event in instructions, counted by valgrind's callgrind: unlike its events per second, which
// the VM's hour moves by a third (docs/performance.md, How changes are judged), five runs of one engine came out
// within 3.2 %, busy machine or not, so a change of several per cent to the segment step shows in one run.
// What it counts is not time: a change that trades instructions for cache misses (or back) shows here the wrong way
// round; confirm a kept change with bench/engine-ab.ts.
//
// The workload is bench/engine.ts's (its cohorts, contexts and event streams, one event per segment call, users
// interleaved): `--users` users, `--warm` rounds of one event each (past the plan's cold first few hundred thousand
// events: engine/PERFORMANCE.md), then `--rounds` measured rounds. Each build runs twice under callgrind, at once
// (two cores): through the warm rounds only, and through the warm and the measured ones; the difference over the
// measured events is its instructions per event. Node runs `--single-threaded` (V8 compiles and collects on the
// main thread, so the same code is optimized at the same event every run; its compile and GC work is counted).
//   npm run build && cp -r dist ab/before   # then change the engine, npm run build again
//   node dist/bench/engine-instructions.js --variant before=ab/before --variant after=dist
// Needs valgrind (`apt-get install -y valgrind`); a build is a dist/ directory holding this script. With the
// defaults each build takes about five minutes.

import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { newUserState, segment, type SegmentContext, type UserState } from '../engine/index.js';
import { engineWorkload, scheduleOf, segmentRounds } from './engine.js';
import { parseVariantArg } from './variants.js';

export interface InstructionSettings {
  readonly users: number;
  readonly warm: number;
  readonly rounds: number;
}

export const DEFAULT_INSTRUCTION_SETTINGS: InstructionSettings = { users: 2_000, warm: 150, rounds: 40 };

/** The instructions callgrind collected, from its closing lines on stderr (`==PID== Collected : N`). */
export function collectedInstructions(stderr: string): number {
  const match = /Collected\s*:\s*([\d,]+)/.exec(stderr);
  if (match === null) throw new Error(`no "Collected" line in callgrind's output:\n${stderr.slice(-2000)}`);
  return Number((match[1] as string).replaceAll(',', ''));
}

/** Instructions per measured event: the longer run's count less the warm-only run's, over the measured events. */
export function perEvent(warmOnly: number, warmAndMeasured: number, settings: InstructionSettings): number {
  return (warmAndMeasured - warmOnly) / (settings.users * settings.rounds);
}

/**
 * The child's work: the streams of `scheduled` rounds made (both runs of a build make the same ones), the first
 * `rounds` of them segmented; answers the memberships held at the end (printed: the work is not dead code).
 */
export function runChild(users: number, scheduled: number, rounds: number): number {
  const { plan, contexts, pool } = engineWorkload(42, 100);
  const schedule = scheduleOf(pool, users, scheduled);
  const states = Array.from({ length: users }, () => newUserState());
  segmentRounds(plan, states, schedule, contexts, 0, rounds);
  let members = 0;
  for (let user = 0; user < users; user++) members += segment(plan, states[user] as UserState, [], contexts[user % contexts.length] as SegmentContext).memberships.length;
  return members;
}

function underCallgrind(dist: string, users: number, scheduled: number, rounds: number): Promise<number> {
  const script = resolve(dist, 'bench', 'engine-instructions.js');
  const args = ['--tool=callgrind', '--callgrind-out-file=/dev/null', '--smc-check=all-non-file', process.execPath, '--single-threaded', script, '--child', String(users), String(scheduled), String(rounds)];
  return new Promise((done, fail) => {
    execFile('valgrind', args, { maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (error !== null) fail(new Error(`valgrind failed (${error.message}):\n${stderr.slice(-2000)}`));
      else done(collectedInstructions(stderr));
    });
  });
}

export async function instructionsPerEvent(dist: string, settings: InstructionSettings): Promise<number> {
  const [warmOnly, warmAndMeasured] = await Promise.all([
    underCallgrind(dist, settings.users, settings.warm + settings.rounds, settings.warm),
    underCallgrind(dist, settings.users, settings.warm + settings.rounds, settings.warm + settings.rounds),
  ]);
  return perEvent(warmOnly, warmAndMeasured, settings);
}

function parseArgs(argv: readonly string[]): { variants: { name: string; dist: string }[]; settings: InstructionSettings } {
  const variants: { name: string; dist: string }[] = [];
  const settings: { -readonly [K in keyof InstructionSettings]: number } = { ...DEFAULT_INSTRUCTION_SETTINGS };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i] as string;
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--variant') {
      const variant = parseVariantArg(value);
      if (variant.flags.length > 0) throw new Error(`--variant takes NAME=DIST here (no flags), got ${value}`);
      variants.push({ name: variant.name, dist: variant.dist });
    } else if (flag === '--users' || flag === '--warm' || flag === '--rounds') {
      const n = Number(value);
      if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${flag} takes a positive integer, got ${value}`);
      settings[flag.slice(2) as keyof InstructionSettings] = n;
    } else throw new Error(`unknown argument ${flag}`);
  }
  if (variants.length === 0) variants.push({ name: 'this', dist: resolve(fileURLToPath(import.meta.url), '..', '..') });
  return { variants, settings };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') {
    process.stdout.write(`${runChild(Number(argv[1]), Number(argv[2]), Number(argv[3]))}\n`);
  } else {
    const { variants, settings } = parseArgs(argv);
    const log = (line: string): void => void process.stdout.write(`${line}\n`);
    log(`engine instructions per event: ${settings.users} users, ${settings.warm} warm rounds, ${settings.rounds} measured`);
    const results: number[] = [];
    for (const variant of variants) {
      const count = await instructionsPerEvent(variant.dist, settings);
      results.push(count);
      const against = results.length > 1 ? `, ${(((count - (results[0] as number)) / (results[0] as number)) * 100).toFixed(2)} % against ${variants[0]?.name}` : '';
      log(`${variant.name}: ${Math.round(count).toLocaleString('en-US')} instructions per event${against}`);
    }
  }
}
