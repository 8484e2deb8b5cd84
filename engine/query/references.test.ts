import { describe, expect, it } from 'vitest';
import { findReferenceProblem } from './references.js';

const graph = (entries: Array<[number, number[]]>) => new Map<number, readonly number[]>(entries);

describe('findReferenceProblem (D18, E12)', () => {
  it('no references, or known ones without a cycle: no problem', () => {
    const existing = graph([[1, []], [2, [1]], [3, [1, 2]]]);
    expect(findReferenceProblem(existing, { code: undefined, references: [] })).toBeUndefined();
    expect(findReferenceProblem(existing, { code: undefined, references: [1, 2, 3] })).toBeUndefined();
    expect(findReferenceProblem(existing, { code: 4, references: [3] })).toBeUndefined();
    expect(findReferenceProblem(existing, { code: 1, references: [] })).toBeUndefined();
  });

  it('a diamond is not a cycle', () => {
    const existing = graph([[1, []], [2, [1]], [3, [1]], [4, [2, 3]]]);
    expect(findReferenceProblem(existing, { code: 5, references: [4, 2] })).toBeUndefined();
  });

  it('an unknown code is a problem at the root naming the code (D18)', () => {
    const existing = graph([[1, []]]);
    expect(findReferenceProblem(existing, { code: undefined, references: [1, 7] })).toEqual({ path: 'query', message: 'unknown cohort code 7' });
    expect(findReferenceProblem(existing, { code: 2, references: [9] }, 'body.query')).toEqual({ path: 'body.query', message: 'unknown cohort code 9' });
  });

  it('the first unknown code is named, before any cycle', () => {
    const existing = graph([[1, [2]], [2, []]]);
    const problem = findReferenceProblem(existing, { code: 2, references: [1, 5, 6] });
    expect(problem?.message).toMatch(/\b5\b/);
    expect(problem?.message).not.toMatch(/\b6\b/);
  });

  it('a self-reference is a cycle (D18)', () => {
    const problem = findReferenceProblem(graph([[1, []]]), { code: 1, references: [1] });
    expect(problem?.path).toBe('query');
    expect(problem?.message).toMatch(/1 -> 1/);
  });

  it('a self-reference of a cohort not yet in the map is a cycle, not an unknown code', () => {
    const problem = findReferenceProblem(graph([]), { code: 4, references: [4] });
    expect(problem?.message).toMatch(/4 -> 4/);
  });

  it('a cycle through existing cohorts is named, shortest first', () => {
    const existing = graph([[1, []], [2, [3]], [3, [1, 9]], [9, [4]], [4, [2]]]);
    // candidate 1 now names 2: 1 -> 2 -> 3 -> 1
    const problem = findReferenceProblem(existing, { code: 1, references: [2] });
    expect(problem?.path).toBe('query');
    expect(problem?.message).toMatch(/1 -> 2 -> 3 -> 1/);
  });

  it("the candidate's references replace its old entry", () => {
    // 1 used to name 2, and 2 names 1; 1 now names nothing: no cycle
    const existing = graph([[1, [2]], [2, [1]]]);
    expect(findReferenceProblem(existing, { code: 1, references: [] })).toBeUndefined();
    // 2 changes to name nothing while 1 still names 2: fine
    expect(findReferenceProblem(existing, { code: 2, references: [] })).toBeUndefined();
  });

  it('a new cohort (no code yet) cannot close a cycle; cycles among others are not its problem', () => {
    const existing = graph([[1, [2]], [2, [1]]]);
    expect(findReferenceProblem(existing, { code: undefined, references: [1] })).toBeUndefined();
    expect(findReferenceProblem(existing, { code: 3, references: [1] })).toBeUndefined();
  });

  it('handles long chains without recursion', () => {
    const n = 200_000;
    const entries: Array<[number, number[]]> = [];
    for (let code = 1; code <= n; code++) entries.push([code, code === n ? [] : [code + 1]]);
    const existing = graph(entries);
    expect(findReferenceProblem(existing, { code: n, references: [1] })?.message).toMatch(new RegExp(`^cohort ${n} `));
    expect(findReferenceProblem(existing, { code: n + 1, references: [1] })).toBeUndefined();
  });
});
