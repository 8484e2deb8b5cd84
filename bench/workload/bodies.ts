// Request bodies of the HTTP benchmarks: seeded users (UUID + an email alias), track calls whose user, event name
// and properties vary per request (300-600 bytes), and stateless calls of 10 events. The baseline gets the same.

import { createRandom } from '../../test/support/sample-cohorts.js';

export const ALIAS_TAG = 'email';
const NAMES = ['Pageview', 'PageviewEngagement', 'Click', 'Buy', 'Search'] as const;
const SECTIONS = ['news', 'sport', 'tech'] as const;
const WORDS = ['market', 'election', 'final', 'launch', 'review', 'weather', 'transfer', 'budget', 'league', 'chip', 'storm', 'vote'];
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5) Mobile/15E148',
  'Mozilla/5.0 (Macintosh; Mac OS X 14_5) Safari/605.1.15',
];
const T0 = Date.UTC(2026, 0, 1);

/** The i-th benchmark user's id: a UUID v4 derived from (seed, i), the same in every run. */
export function userIdOf(seed: number, i: number): string {
  const random = createRandom((seed * 1_000_003 + i * 2_654_435_761) >>> 0);
  const bytes = Buffer.alloc(16);
  for (let b = 0; b < 16; b += 4) bytes.writeUInt32BE(Math.floor(random() * 4_294_967_296), b);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function aliasOf(i: number): { tag: string; id: string } {
  return { tag: ALIAS_TAG, id: `reader${i}@bench.example` };
}

/** A UUID v4 from a PRNG (session and view ids). */
function uuidFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = ((Math.floor(random() * 4) + 8) as number).toString(16);
  const s = hex.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

/**
 * An event's JSON members (without braces): name, properties and sometimes session/view ids. Types per event name
 * never change (D30 schemas), and the properties are the ones the bench cohorts query (section, price, tags, flag,
 * page.type, published, items[].key/n, engaged_time, completion) plus what a site sends anyway (url, title, client).
 */
function eventMembers(random: () => number, withTime: number | undefined): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));
  const name = pick(NAMES);
  const section = pick(SECTIONS);
  const article = int(10_000, 99_999);
  const properties: Record<string, unknown> = {
    url: `https://www.daily.example/${section}/2026/${pick(WORDS)}-${pick(WORDS)}-${article}`,
    title: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)}`,
    section,
    price: int(0, 100),
    tags: [pick(['a', 'b', 'c']), ...(random() < 0.5 ? [pick(['a', 'b', 'c'])] : [])],
    flag: random() < 0.5,
    page: { type: pick(['article', 'index', 'video', '']) },
    published: new Date(T0 + int(0, 10) * 86_400_000).toISOString(),
    items: [{ key: pick(['a', 'b']), n: int(0, 10) }, ...(random() < 0.5 ? [{ key: pick(['a', 'b']), n: int(0, 10) }] : [])],
    client: { ua: pick(AGENTS), lang: pick(['en-GB', 'de-DE', 'fr-FR']) },
  };
  if (name === 'PageviewEngagement') {
    properties['engaged_time'] = int(0, 30);
    properties['completion'] = Math.round(random() * 100) / 100;
  }
  let members = `"name":${JSON.stringify(name)}`;
  if (withTime !== undefined) members += `,"time":"${new Date(withTime).toISOString()}"`;
  if (random() < 0.3) members += `,"session_id":"${uuidFrom(random)}"`;
  if (random() < 0.3) members += `,"view_id":"${uuidFrom(random)}"`;
  return `${members},"properties":${JSON.stringify(properties)}`;
}

/** Track bodies: `next()` gives a new body per call (a pool of distinct events, each sent for a random user). */
export class TrackBodies {
  private readonly events: string[];
  private readonly random: () => number;
  private k = 0;

  constructor(
    private readonly seed: number,
    private readonly users: number,
    /** Share of calls that name the user by alias instead of user_id (identity resolution on the hot path). */
    private readonly aliasShare = 0.2,
    pool = 20_000,
  ) {
    const random = createRandom(seed ^ 0x5eed);
    this.events = Array.from({ length: pool }, () => eventMembers(random, undefined));
    this.random = createRandom(seed ^ 0xbeef);
  }

  /** A body for a random user. */
  next(): string {
    return this.forUser(Math.floor(this.random() * this.users));
  }

  /** A body for user `i`: by alias now and then (the alias is bound to the user at seeding). */
  forUser(i: number): string {
    const event = this.events[this.k++ % this.events.length] as string;
    if (this.random() < this.aliasShare) {
      const alias = aliasOf(i);
      return `{"aliases":[{"id":"${alias.id}","tag":"${alias.tag}","priority":1}],${event}}`;
    }
    return `{"user_id":"${userIdOf(this.seed, i)}",${event}}`;
  }

  /** A stateful segmentation body (D24) of `n` events (n <= 10) timed now, for seeding history quickly. */
  historyFor(i: number, n: number): string {
    const time = new Date().toISOString();
    const events = Array.from({ length: n }, () => `{"time":"${time}",${this.events[this.k++ % this.events.length] as string}}`);
    return `{"user_id":"${userIdOf(this.seed, i)}","events":[${events.join(',')}]}`;
  }

  /**
   * A user's first body: user_id AND alias, which binds the alias to the user (D28). Sent again to a restarted
   * server, it writes nothing and leaves the user and its alias in the identity cache (the HTTP benches' warm-up).
   */
  firstFor(i: number): string {
    const alias = aliasOf(i);
    const event = this.events[this.k++ % this.events.length] as string;
    return `{"user_id":"${userIdOf(this.seed, i)}","aliases":[{"id":"${alias.id}","tag":"${alias.tag}","priority":1}],${event}}`;
  }
}

/** Stateless bodies: 10 events per call for a user of a pool, with that user's passed-back state. */
export class StatelessBodies {
  private readonly batches: string[];
  private readonly random: () => number;
  private k = 0;

  constructor(seed: number, pool = 2_000, now = Date.now()) {
    const random = createRandom(seed ^ 0x57a7e);
    this.batches = Array.from({ length: pool }, () => {
      let t = now - 60_000;
      const events = Array.from({ length: 10 }, () => `{${eventMembers(random, (t += Math.floor(random() * 5_000)))}}`);
      return `[${events.join(',')}]`;
    });
    this.random = createRandom(seed ^ 0xfeed);
  }

  /** The first call of a user (no state). */
  initial(userId: string): string {
    return `{"user_id":"${userId}","events":${this.batches[this.k++ % this.batches.length] as string}}`;
  }

  /** A call with a user's state (as the previous answer returned it, JSON text). */
  withState(userId: string, stateJson: string): string {
    return `{"user_id":"${userId}","events":${this.batches[this.k++ % this.batches.length] as string},"state":${stateJson}}`;
  }

  pickIndex(count: number): number {
    return Math.floor(this.random() * count);
  }
}
