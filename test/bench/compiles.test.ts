// bench/compiles.ts: TurboFan compiles and deoptimizations counted per function from a `--trace-opt --trace-deopt`
// output (lines as Node 20's V8 prints them).

import { describe, expect, it } from 'vitest';
import { countCompiles, sweepTraces } from '../../bench/compiles.js';

const TRACE = [
  '[marking 0x114c5d027969 <JSFunction buildOps (sfi = 0x25a6e376ce01)> for optimization to TURBOFAN, ConcurrencyMode::kConcurrent, reason: hot and stable]',
  '[compiling method 0x114c5d027969 <JSFunction buildOps (sfi = 0x25a6e376ce01)> (target TURBOFAN), mode: ConcurrencyMode::kConcurrent]',
  '[completed compiling 0x114c5d027969 <JSFunction buildOps (sfi = 0x25a6e376ce01)> (target TURBOFAN) - took 0.009, 45.683, 0.210 ms]',
  '[completed optimizing 0x114c5d027969 <JSFunction buildOps (sfi = 0x25a6e376ce01)> (target TURBOFAN)]',
  '[bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x114c5d027969 <JSFunction buildOps (sfi = 0x25a6e376ce01)>, 0x313af207f031 <Code TURBOFAN>, opt id 46, bytecode offset 72, deopt exit 59, FP to SP delta 272, caller SP 0x7ffd31e97e60, pc 0x7febcb0ba1cb]',
  '[completed compiling 0x114c5d027970 <JSFunction buildOps (sfi = 0x25a6e376ce01)> (target TURBOFAN) - took 0.011, 31.393, 0.277 ms]',
  '{"a request log line": "not a trace line"}',
  '[completed compiling 0x2b18759f81f9 <JSFunction (sfi = 0x1383190d4e81)> (target TURBOFAN) - took 0.007, 1.5, 0.099 ms]',
  '[completed compiling 0x31abfd301181 <JSFunction (sfi = 0x1383190d4e81)> (target TURBOFAN) - took 0.005, 2.5, 0.074 ms]',
  '[completed compiling 0x31abfd301182 <JSFunction (sfi = 0x1383190d4e81)> (target TURBOFAN) - took 0.005, 3.0, 0.074 ms]',
  '[completed compiling 0x0a6cf1ed9629 <JSFunction run (sfi = 0xa6cf1ed9009)> (target TURBOFAN) OSR - took 0.004, 1.470, 0.014 ms]',
  '[completed compiling 0x0a6cf1ed9630 <JSFunction once (sfi = 0xa6cf1ed9010)> (target TURBOFAN) - took 0.004, 4.0, 0.014 ms]',
  '[bailout (kind: deopt-lazy, reason: (unknown)): begin. deoptimizing 0x102eeac6a9e1 <JSFunction read (sfi = 0x2b32c38af259)>, 0x042846de78f9 <Code TURBOFAN>, opt id 8, bytecode offset 185, deopt exit 107, FP to SP delta 72, caller SP 0x7febc8fb5c98, pc 0x7feb8409f5b9]',
].join('\n');

describe('compiles bench', () => {
  it('counts every compile and deoptimization, and lists the functions compiled more than once by their shared info', () => {
    const counts = countCompiles(TRACE);
    expect(counts.compiles).toBe(7);
    expect(counts.ms).toBe(Math.round(45.683 + 31.393 + 1.5 + 2.5 + 3 + 1.47 + 4));
    expect(counts.deopts).toBe(2);
    expect(counts.repeated).toEqual([
      { name: '(anonymous)', compiles: 3, ms: 7, deopts: 0 },
      { name: 'buildOps', compiles: 2, ms: 77, deopts: 1 },
    ]);
  });

  it("cuts the trace at the sweeps' marks (bench/backfill.ts markTrace), as %DebugPrint prints them", () => {
    const compiled = (name: string): string => `[completed compiling 0x1 <JSFunction ${name} (sfi = 0x${name.length})> (target TURBOFAN) - took 0.001, 2.0, 0.1 ms]`;
    const trace = [
      compiled('seeding'),
      'DebugPrint: 0x2bfbebf26e51: [String] in OldSpace: #audience-bench-mark:first:start',
      '0x21b6da200299: [Map] in ReadOnlySpace',
      compiled('scanUsers'),
      compiled('catchUp'),
      'DebugPrint: 0x2bfbebf26e71: [String] in OldSpace: #audience-bench-mark:first:end',
      compiled('between'),
      'DebugPrint: 0x222fbeea8be9: [String]: c"audience-bench-mark:later-1:start"',
      compiled('catchUp'),
      'DebugPrint: 0x222fbeea8c09: [String]: c"audience-bench-mark:later-1:end"',
      'DebugPrint: 0x222fbeea8c29: [String]: c"audience-bench-mark:later-2:start"',
      compiled('unfinished'),
    ].join('\n');
    const sweeps = sweepTraces(trace);
    expect(sweeps.map((sweep) => sweep.label)).toEqual(['first', 'later-1']);
    expect(sweeps.map((sweep) => countCompiles(sweep.trace).compiles)).toEqual([2, 1]);
    expect(sweepTraces(compiled('unmarked'))).toEqual([]);
  });
});
