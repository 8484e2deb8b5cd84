import { describe, expect, it } from 'vitest';
import { packMessage, packReply, unpackReply } from './messages.js';
import type { UserResult, WorkReply } from './work.js';

const entered = { cohort: 7, kind: 'entered' as const, time: 1_700_000_000_000, eventIndex: 0 };

function user(previous: number[], current: number[], steps: { memberships: number[]; moved?: boolean }[]): UserResult {
  return {
    bytes: 4096,
    count: 12,
    previous,
    current,
    deadlineBefore: Number.POSITIVE_INFINITY,
    deadline: 1_700_000_060_000,
    steps: steps.map((step) => ({ transitions: step.moved === true ? [entered] : [], memberships: step.memberships })),
  };
}

describe('task replies across the thread boundary (messages.ts)', () => {
  const unchanged = [3, 5, 8, 13, 21];
  const cases: [string, UserResult][] = [
    ['nothing changes', user(unchanged, unchanged, [{ memberships: [...unchanged] }, { memberships: [...unchanged] }])],
    ['a catch-up changes them', user([3, 5], [3, 5, 7], [{ memberships: [3, 5, 7] }])],
    ['a step changes them', user(unchanged, unchanged, [{ memberships: [...unchanged] }, { memberships: [3, 5, 7, 8, 13, 21], moved: true }, { memberships: [3, 5, 7, 8, 13, 21] }])],
    ['a step changes them back', user([1], [1], [{ memberships: [] }, { memberships: [1] }])],
    ['no steps', user([2], [2], [])],
    ['equal lengths, other codes', user([1, 2], [1, 3], [{ memberships: [1, 4] }])],
  ];

  it.each(cases)('unpacks what was packed when %s', (_name, result) => {
    const reply: WorkReply = { groups: [[result, user([], [], [{ memberships: [] }])]], snapshots: [null] };
    expect(unpackReply(packReply(reply))).toEqual(reply);
  });

  it('leaves out the lists that repeat the one before them', () => {
    const [, repeated] = cases[0] as [string, UserResult];
    const reply: WorkReply = { groups: [[repeated]] };
    const slim = packReply(reply).byteLength;
    const whole = packMessage(reply).byteLength;
    // Three of the four copies of five one-byte codes (and their array headers) stay behind.
    expect(whole - slim).toBeGreaterThanOrEqual(3 * 6);
    const back = unpackReply(packReply(reply));
    if (back.needPlan === true || back.lost !== undefined) throw new Error('a result was expected');
    const restored = back.groups[0]?.[0] as UserResult;
    expect(restored.current).toBe(restored.previous);
    expect(restored.steps[1]?.memberships).toBe(restored.previous);
  });

  it('passes a plan request and a lost-state answer unchanged', () => {
    const needPlan: WorkReply = { needPlan: true, orgs: ['org-a'] };
    const lost: WorkReply = { lost: ['org-a\u0000user-b'] };
    expect(unpackReply(packReply(needPlan))).toEqual(needPlan);
    expect(unpackReply(packReply(lost))).toEqual(lost);
  });
});
