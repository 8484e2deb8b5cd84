// The processes a benchmark drives: the server under test (`audience serve`, a separate process over a temp data
// dir on an ephemeral port) and the baseline; plus their resident memory and CPU time read from /proc.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SERVE_NODE_OPTIONS } from '../cli/node-options.js';
import { OWNER_THREAD_NAME } from '../server/ingest/worker/thread-name.js';

/** dist/ of this build: this file is dist/bench/processes.js once compiled; run from source (by a test), the repo's dist/. */
const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = import.meta.url.endsWith('.ts') ? join(HERE, '..', 'dist') : join(HERE, '..');
export const CLI_BIN = join(DIST, 'cli', 'bin.js');
const BASELINE = join(DIST, 'bench', 'baseline-server.js');
const FLOOR = join(DIST, 'bench', 'floor-server.js');

export interface Keys {
  readonly privateKey: string;
  readonly publicKey: string;
}

export interface Running {
  readonly url: string;
  readonly pid: number;
  /** Printed by the first start of a data dir only. */
  readonly keys: Keys | undefined;
  /** SIGTERM, then wait for the exit (graceful stop: the store is flushed and closed). */
  stop(): Promise<void>;
  /** Sends a signal (SIGKILL: a crash; SIGSTOP/SIGCONT: a stall) and resolves once a killed process is gone. */
  signal(signal: NodeJS.Signals): Promise<void>;
  /** Everything the process printed so far (the tail). */
  output(): string;
}

export interface AudienceOptions {
  readonly dataDir: string;
  readonly fsync?: boolean;
  /** Write a V8 CPU profile of the server into this directory (node --cpu-prof). */
  readonly cpuProfileDir?: string;
  /** `serve --threads N` (partition owners); the server's default when absent. */
  readonly threads?: number;
  /** More `serve` flags (a cluster node's `--cluster ...`). */
  readonly args?: readonly string[];
  /** Keep the tail of what the server prints after it listens (for `output()`); default only drained. */
  readonly keepOutput?: boolean;
  /** Another build's `cli/bin.js` (bench/ab.ts compares builds); default this build's. */
  readonly cliBin?: string;
  /** Node options before the script; default those `npm start` gives (cli/node-options.ts). bench/ab.ts compares others. */
  readonly nodeArgs?: readonly string[];
  /** More environment variables for the server (bench/ab.ts: `LD_PRELOAD` of another allocator, ...). */
  readonly env?: Readonly<Record<string, string>>;
}

export function startAudience(options: AudienceOptions): Promise<Running> {
  // As `npm start` runs it (cli/node-options.ts), unless the caller compares other options (bench/ab.ts).
  const node = [...(options.nodeArgs ?? SERVE_NODE_OPTIONS), ...(options.cpuProfileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir])];
  const serve = ['--data', options.dataDir, '--port', '0'];
  const threads = options.threads === undefined ? [] : ['--threads', String(options.threads)];
  return startProcess([...node, options.cliBin ?? CLI_BIN, 'serve', ...serve, ...threads, ...(options.fsync ? ['--fsync'] : []), ...(options.args ?? [])], 'audience serve', options.keepOutput === true, options.env);
}

export function startBaseline(): Promise<Running> {
  return startProcess([BASELINE, '--port', '0'], 'baseline');
}

/** The floor server (bench/floor-server.ts) over `dataDir`, with its flags (`--engine`) and `npm start`'s Node options. */
export function startFloor(dataDir: string, args: readonly string[] = [], nodeArgs: readonly string[] = SERVE_NODE_OPTIONS): Promise<Running> {
  return startProcess([...nodeArgs, FLOOR, '--data', dataDir, '--port', '0', ...args], 'floor');
}

function startProcess(args: string[], label: string, keepOutput = false, env?: Readonly<Record<string, string>>): Promise<Running> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(env === undefined ? {} : { env: { ...process.env, ...env } }) });
  let stdout = '';
  let stderr = '';
  return new Promise<Running>((resolve, reject) => {
    const fail = (why: string): void => reject(new Error(`${label} did not start (${why}):\n${stderr.slice(-2000)}`));
    child.once('error', (error) => fail(error.message));
    child.once('exit', (code) => fail(`exit code ${code}`));
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-20_000);
    });
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const listening = /listening on (\S+)/.exec(stdout);
      if (listening === null) return;
      // From here the output (the server's JSON-line logs, one per request) is only drained: kept and matched again
      // on every chunk, it cost the load generator's cores more and more over a run.
      let tail = stdout;
      child.stdout.removeAllListeners('data');
      if (keepOutput) child.stdout.on('data', (more: string) => void (tail = (tail + more).slice(-50_000)));
      else child.stdout.resume();
      child.removeAllListeners('exit');
      const privateKey = /private key[^:]*:\s*([0-9a-f-]{36})/.exec(stdout)?.[1];
      const publicKey = /public key:\s*([0-9a-f-]{36})/.exec(stdout)?.[1];
      resolve({
        url: listening[1] as string,
        pid: child.pid as number,
        keys: privateKey && publicKey ? { privateKey, publicKey } : undefined,
        stop: () => stopProcess(child),
        signal: (name) => signalProcess(child, name),
        output: () => `${tail}\n${stderr}`,
      });
    });
  });
}

function signalProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  if (signal !== 'SIGKILL') {
    child.kill(signal);
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Resident set size of a process, bytes (VmRSS). */
export async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kb) * 1024;
}

/** CPU time (user + system) in clock ticks (1/100 s on Linux) of a `/proc/.../stat` file: a process's or a thread's. */
async function statTicks(path: string): Promise<number> {
  const stat = await readFile(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const cpuTicks = (pid: number): Promise<number> => statTicks(`/proc/${pid}/stat`);

/** A thread's name (`comm`); '' when it ended meanwhile. */
async function threadName(pid: number, tid: string): Promise<string> {
  try {
    return (await readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8')).trim();
  } catch {
    return '';
  }
}

export interface ThreadTicks {
  /** The main thread's (the thread whose id is the pid). */
  readonly main: number;
  /** Each other thread's, by thread id. */
  readonly others: ReadonlyMap<string, number>;
  /** The ids of the partition owners' threads (named by server/ingest/worker/thread-name.ts). */
  readonly owners: ReadonlySet<string>;
}

/** CPU time of each thread of a process, in clock ticks, and which of its threads are partition owners. */
export async function threadCpuTicks(pid: number): Promise<ThreadTicks> {
  let main = 0;
  const others = new Map<string, number>();
  const owners = new Set<string>();
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    let ticks: number;
    try {
      ticks = await statTicks(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      continue; // the thread ended meanwhile
    }
    if (tid === String(pid)) {
      main = ticks;
      continue;
    }
    others.set(tid, ticks);
    if ((await threadName(pid, tid)) === OWNER_THREAD_NAME) owners.add(tid);
  }
  return { main, others, owners };
}

/**
 * Waits until the process uses under `maxShare` of a core over a second (LevelDB compaction and write-behind
 * snapshots settle after seeding), at most `maxSeconds`. Answers the seconds waited.
 */
export async function waitForIdle(pid: number, maxSeconds = 60, maxShare = 0.05): Promise<number> {
  const start = Date.now();
  let before = await cpuTicks(pid);
  while (Date.now() - start < maxSeconds * 1000) {
    await sleep(1000);
    const now = await cpuTicks(pid);
    if ((now - before) / 100 < maxShare) break;
    before = now;
  }
  return (Date.now() - start) / 1000;
}
