// Summarises a V8 CPU profile (`--cpu-prof`, e.g. `npm run bench -- --quick --only stateless --cpu-prof DIR`) over its
// load: the last run of at least 3 seconds in which the thread was busy (at least --busy of each second, default 50 %;
// a bench's measured load is its server's last work, after seeding and an idle wait), or the seconds given with
// --from/--to. Prints the thread's busy share per second and the functions by inclusive and self time over the window.
// Run: node dist/bench/profile-summary.js <file.cpuprofile> [--top 30] [--busy 0.5] [--from S --to S]

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Where a thread waits for work: the event loop's idle, a piscina worker's wait for its next task. */
const IDLE = new Set(['(idle)', 'atomicsWaitLoop']);

export interface ProfileSummary {
  /** Busy share of each second of the profile. */
  readonly perSecond: readonly number[];
  /** The window summarised: [from, to) in seconds from the profile's start, and its busy share. */
  readonly window: { readonly from: number; readonly to: number; readonly busy: number };
  /** Shares of the window's time, largest first. */
  readonly inclusive: readonly (readonly [string, number])[];
  readonly self: readonly (readonly [string, number])[];
}

const nameOf = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame;
  const file = url.split('/').slice(-2).join('/');
  return `${functionName || '(anonymous)'}${file === '' ? '' : ` ${file}:${lineNumber + 1}`}`;
};

/** The shortest busy run taken for the load (a shorter one is a blip, such as a compaction). */
const MIN_RUN_SECONDS = 3;

export function summarise(profile: Profile, busyAtLeast = 0.5, window?: { readonly from: number; readonly to: number }): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  // Sample i lasts until sample i + 1 (timeDeltas[i + 1]); its time is startTime + the deltas up to i.
  const at: number[] = [];
  let time = profile.startTime;
  for (const delta of profile.timeDeltas) at.push((time += delta));
  const duration = (i: number): number => profile.timeDeltas[i + 1] ?? 0;
  const second = (i: number): number => Math.floor(((at[i] as number) - profile.startTime) / 1e6);
  const seconds = profile.samples.length === 0 ? 0 : second(profile.samples.length - 1) + 1;
  const busy = new Array<number>(seconds).fill(0);
  const all = new Array<number>(seconds).fill(0);
  profile.samples.forEach((id, i) => {
    const s = second(i);
    all[s] = (all[s] as number) + duration(i);
    if (!IDLE.has((byId.get(id) as ProfileNode).callFrame.functionName)) busy[s] = (busy[s] as number) + duration(i);
  });
  const perSecond = all.map((total, s) => (total === 0 ? 0 : (busy[s] as number) / total));
  let best = window ?? { from: 0, to: seconds };
  let runStart = -1;
  for (let s = 0; s <= seconds && window === undefined; s++) {
    const isBusy = s < seconds && (perSecond[s] as number) >= busyAtLeast;
    if (isBusy && runStart < 0) runStart = s;
    if (!isBusy && runStart >= 0) {
      if (s - runStart >= MIN_RUN_SECONDS) best = { from: runStart, to: s };
      runStart = -1;
    }
  }
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const s = second(i);
    if (s < best.from || s >= best.to) return;
    const dt = duration(i);
    total += dt;
    const node = byId.get(id) as ProfileNode;
    self.set(nameOf(node), (self.get(nameOf(node)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = nameOf(byId.get(at) as ProfileNode);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + dt);
    }
  });
  const shares = (map: Map<string, number>) => [...map].map(([name, t]) => [name, total === 0 ? 0 : t / total] as const).sort((a, b) => b[1] - a[1]);
  const windowBusy = perSecond.slice(best.from, best.to).reduce((sum, share) => sum + share, 0) / Math.max(1, best.to - best.from);
  return { perSecond, window: { ...best, busy: windowBusy }, inclusive: shares(inclusive), self: shares(self) };
}

function main(argv: readonly string[]): void {
  const file = argv[0];
  if (file === undefined || file.startsWith('--')) {
    process.stderr.write('usage: node dist/bench/profile-summary.js <file.cpuprofile> [--top 30] [--busy 0.5]\n');
    process.exitCode = 2;
    return;
  }
  const option = (name: string, fallback: number): number => {
    const at = argv.indexOf(name);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const top = option('--top', 30);
  const window = argv.includes('--from') ? { from: option('--from', 0), to: option('--to', Number.POSITIVE_INFINITY) } : undefined;
  // A reader that stops early (| head) is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
  const summary = summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, option('--busy', 0.5), window);
  const pct = (share: number): string => `${(100 * share).toFixed(1).padStart(5)} %`;
  const { from, to, busy } = summary.window;
  process.stdout.write(`busy share per second: ${summary.perSecond.map((share, s) => `${s}:${Math.round(100 * share)}`).join(' ')}\n`);
  process.stdout.write(`window summarised: seconds ${from}-${to} (busy ${pct(busy).trim()})\n\ninclusive:\n`);
  for (const [name, share] of summary.inclusive.slice(0, top)) process.stdout.write(`${pct(share)}  ${name}\n`);
  process.stdout.write('\nself:\n');
  for (const [name, share] of summary.self.slice(0, top)) process.stdout.write(`${pct(share)}  ${name}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main(process.argv.slice(2));
