// Stored records (msgpack maps, store/values.ts) read straight into the engine's events, for the owners' replays
// (catch-ups, parked users' histories, offline computations: worker/work.ts): only `name`, `timeMs`, `properties`,
// `session_id` and `view_id` are built; the record's other fields (`id`, and `user_id`, `time`, `seq` in records
// stored before record.ts `RecordValue`) are stepped over without making strings of them. Decoding whole records
// with msgpackr and converting them took 1.19 s for the backfill bench's million events (`node
// dist/bench/backfill.js`, parts.decodeSeconds, before this reader); this reader took 0.55 s in bench/README.md (5).
// Given the top-level property keys a plan can read (engine Plan.eventPropertyKeys), it builds only those of each
// event's properties and steps over the rest: the plan answers the same (the owners' catch-ups replay through the
// changed cohorts' part of a plan, which often reads one or two keys of events that carry many).
// Exactness: the answer is always what `toEngineEvent(decodeValue(record))` gives (with the properties outside the
// keys given left out; a record left to msgpackr keeps them all). Values are built the way msgpackr
// builds them with the store's options (plain objects); a string that is not ASCII is decoded by msgpackr itself;
// a key starting `__proto_` (escaped in the store, server/msgpack-keys.ts) and anything else this reader does not
// build (extensions, binary, 64-bit integers, non-string keys) make it decode that whole record with the store's
// decoder.

import type { EngineEvent } from '../../../engine/api.js';
import { decodeValueAt } from '../../store/values.js';

/** A record this reader leaves to msgpackr. */
const UNSUPPORTED = new Error('left to msgpackr');

const NAME = keyBytes('name');
const TIME_MS = keyBytes('timeMs');
const PROPERTIES = keyBytes('properties');
const SESSION_ID = keyBytes('session_id');
const VIEW_ID = keyBytes('view_id');

function keyBytes(key: string): Uint8Array {
  return Uint8Array.from(key, (c) => c.charCodeAt(0));
}

/** A key of the form msgpack-keys.ts escapes or restores starts so: such a record is left to msgpackr. */
const PROTO_MARK = keyBytes('__proto_');

/** An empty properties object, shared by the events whose wanted properties are all absent (never written to). */
const NO_PROPERTIES: Readonly<Record<string, unknown>> = Object.freeze({});

const encoder = new TextEncoder();
const keyBytesCache = new WeakMap<ReadonlySet<string>, readonly Uint8Array[]>();

/** The keys as their UTF-8 bytes (as msgpack stores them), once per set. */
function keyBytesOf(keys: ReadonlySet<string>): readonly Uint8Array[] {
  let bytes = keyBytesCache.get(keys);
  if (bytes === undefined) {
    bytes = [...keys].map((key) => encoder.encode(key));
    keyBytesCache.set(keys, bytes);
  }
  return bytes;
}

/**
 * The engine events of `count` records laid one after another in `bytes`, in order; `fallback` decodes one record
 * from its first byte (answering the event and the offset after it) when this reader leaves it to msgpackr. With
 * `keys`, each event's properties hold only those of its top-level properties (a shared empty object when none).
 */
export function readEngineEvents(
  bytes: Uint8Array,
  fallback: (bytes: Uint8Array, start: number) => { event: EngineEvent; end: number },
  keys?: ReadonlySet<string>,
): EngineEvent[] {
  const reader = new Reader(bytes, keys === undefined ? undefined : keyBytesOf(keys));
  const events: EngineEvent[] = [];
  while (reader.at < bytes.length) {
    const start = reader.at;
    try {
      events.push(reader.record());
    } catch {
      // UNSUPPORTED, or bytes that end too soon (msgpackr then fails the way decodeValues always did).
      const { event, end } = fallback(bytes, start);
      events.push(event);
      reader.at = end;
    }
  }
  return events;
}

/** Distinct event names a reader keeps for reuse (name()). */
const NAMES_KEPT = 8;

class Reader {
  at = 0;
  private readonly view: DataView;
  private readonly nameBytes: Uint8Array[] = [];
  private readonly nameStrings: string[] = [];

  constructor(
    private readonly src: Uint8Array,
    /** Build only these top-level properties (their UTF-8 bytes); undefined: every one. */
    private readonly wanted: readonly Uint8Array[] | undefined,
  ) {
    this.view = new DataView(src.buffer, src.byteOffset, src.byteLength);
  }

  record(): EngineEvent {
    const size = this.mapSize(this.src[this.at++] as number);
    let name: unknown;
    let time: unknown;
    let properties: unknown;
    let session: unknown;
    let view: unknown;
    for (let i = 0; i < size; i++) {
      const key = this.keyExtent();
      if (this.keyIs(key, NAME)) name = this.name();
      else if (this.keyIs(key, TIME_MS)) time = this.value();
      else if (this.keyIs(key, PROPERTIES)) properties = this.wanted === undefined ? this.value() : this.selected(this.wanted);
      else if (this.keyIs(key, SESSION_ID)) session = this.value();
      else if (this.keyIs(key, VIEW_ID)) view = this.value();
      else this.skip();
    }
    if (this.at > this.src.length) throw UNSUPPORTED;
    return {
      name: name as string,
      time: time as number,
      properties: properties as Readonly<Record<string, unknown>>,
      session_id: (session as string | null | undefined) ?? null,
      view_id: (view as string | null | undefined) ?? null,
    };
  }

  /**
   * The `name` at the offset. A history repeats a few names: one of up to NAMES_KEPT names read before is answered
   * by comparing its bytes (the same bytes decode to the same string), not built again; a name that is not a string
   * leaves the record to msgpackr.
   */
  private name(): unknown {
    const header = this.at;
    const start = this.keyExtent();
    const bytes = this.nameBytes;
    for (let n = 0; n < bytes.length; n++) if (this.keyIs(start, bytes[n] as Uint8Array)) return this.nameStrings[n];
    this.at = header;
    const name = this.value();
    if (bytes.length < NAMES_KEPT) {
      bytes.push(this.src.slice(start, this.at));
      this.nameStrings.push(name as string);
    }
    return name;
  }

  /** The entry count of the map whose first byte is `token` (anything else is left to msgpackr). */
  private mapSize(token: number): number {
    if (token >= 0x80 && token <= 0x8f) return token - 0x80;
    if (token === 0xde) {
      this.at += 2;
      return this.view.getUint16(this.at - 2);
    }
    if (token === 0xdf) {
      this.at += 4;
      return this.view.getUint32(this.at - 4);
    }
    throw UNSUPPORTED;
  }

  /**
   * A string's bytes as [start, end): the offset moves past it and `start` is answered (anything but a string is left
   * to msgpackr). Its bytes are compared, not decoded (keyIs).
   */
  private keyExtent(): number {
    const src = this.src;
    const token = src[this.at++] as number;
    let length: number;
    if (token >= 0xa0 && token <= 0xbf) length = token - 0xa0;
    else if (token === 0xd9) length = src[this.at++] as number;
    else if (token === 0xda) {
      length = this.view.getUint16(this.at);
      this.at += 2;
    } else if (token === 0xdb) {
      length = this.view.getUint32(this.at);
      this.at += 4;
    } else throw UNSUPPORTED;
    const start = this.at;
    this.at += length;
    if (this.at > src.length) throw UNSUPPORTED;
    return start;
  }

  private keyIs(start: number, key: Uint8Array): boolean {
    if (this.at - start !== key.length) return false;
    const src = this.src;
    for (let i = 0; i < key.length; i++) if (src[start + i] !== key[i]) return false;
    return true;
  }

  /**
   * The properties map at the offset with only the `wanted` keys built (the others stepped over); anything but a map
   * of string keys, or a key starting `__proto_` (escaped in the store), is left to msgpackr.
   */
  private selected(wanted: readonly Uint8Array[]): Record<string, unknown> {
    const src = this.src;
    const size = this.mapSize(src[this.at++] as number);
    if (size > (src.length - this.at) / 2) throw UNSUPPORTED;
    let object: Record<string, unknown> | undefined;
    for (let i = 0; i < size; i++) {
      const header = this.at;
      const start = this.keyExtent();
      if (this.startsWith(start, PROTO_MARK)) throw UNSUPPORTED;
      if (!this.isWanted(start, wanted)) {
        this.skip();
        continue;
      }
      this.at = header;
      const key = this.value() as string;
      (object ??= {})[key] = this.value();
    }
    return object ?? NO_PROPERTIES;
  }

  /** Whether the key ending at the offset, from `start`, is one of `wanted`. */
  private isWanted(start: number, wanted: readonly Uint8Array[]): boolean {
    for (let k = 0; k < wanted.length; k++) if (this.keyIs(start, wanted[k] as Uint8Array)) return true;
    return false;
  }

  /** Whether the bytes from `start` to the offset begin with `prefix`. */
  private startsWith(start: number, prefix: Uint8Array): boolean {
    if (this.at - start < prefix.length) return false;
    const src = this.src;
    for (let i = 0; i < prefix.length; i++) if (src[start + i] !== prefix[i]) return false;
    return true;
  }

  /** The value at the offset, as msgpackr (plain objects for maps) builds it. */
  private value(): unknown {
    const src = this.src;
    const token = src[this.at++] as number;
    if (token < 0x80) return token;
    if (token < 0x90) return this.object(token - 0x80);
    if (token < 0xa0) return this.array(token - 0x90);
    if (token < 0xc0) return this.string(token - 0xa0, 1);
    if (token >= 0xe0) return token - 0x100;
    const view = this.view;
    const at = this.at;
    switch (token) {
      case 0xc0:
        return null;
      case 0xc2:
        return false;
      case 0xc3:
        return true;
      case 0xca:
        this.at += 4;
        return view.getFloat32(at);
      case 0xcb:
        this.at += 8;
        return view.getFloat64(at);
      case 0xcc:
        this.at += 1;
        return view.getUint8(at);
      case 0xcd:
        this.at += 2;
        return view.getUint16(at);
      case 0xce:
        this.at += 4;
        return view.getUint32(at);
      case 0xd0:
        this.at += 1;
        return view.getInt8(at);
      case 0xd1:
        this.at += 2;
        return view.getInt16(at);
      case 0xd2:
        this.at += 4;
        return view.getInt32(at);
      case 0xd9:
        this.at += 1;
        return this.string(view.getUint8(at), 2);
      case 0xda:
        this.at += 2;
        return this.string(view.getUint16(at), 3);
      case 0xdb:
        this.at += 4;
        return this.string(view.getUint32(at), 5);
      case 0xdc:
        this.at += 2;
        return this.array(view.getUint16(at));
      case 0xdd:
        this.at += 4;
        return this.array(view.getUint32(at));
      case 0xde:
        this.at += 2;
        return this.object(view.getUint16(at));
      case 0xdf:
        this.at += 4;
        return this.object(view.getUint32(at));
      default:
        // nil-like 0xc1, binary, extensions (dates, undefined, records), 64-bit integers: msgpackr decides.
        throw UNSUPPORTED;
    }
  }

  private object(size: number): Record<string, unknown> {
    if (size > (this.src.length - this.at) / 2) throw UNSUPPORTED;
    const object: Record<string, unknown> = {};
    for (let i = 0; i < size; i++) {
      const token = this.src[this.at] as number;
      // msgpackr turns other keys (numbers, ...) into property names its own way.
      if (!((token >= 0xa0 && token <= 0xbf) || token === 0xd9 || token === 0xda || token === 0xdb)) throw UNSUPPORTED;
      const key = this.value() as string;
      // Keys `__proto_...` are escaped in the store (server/msgpack-keys.ts): the store's own decoder restores them.
      if (key.startsWith('__proto_')) throw UNSUPPORTED;
      object[key] = this.value();
    }
    return object;
  }

  private array(size: number): unknown[] {
    if (size > this.src.length - this.at) throw UNSUPPORTED;
    const array = new Array<unknown>(size);
    for (let i = 0; i < size; i++) array[i] = this.value();
    return array;
  }

  /** A string of `length` bytes whose header took `header` bytes: ASCII here, anything else through msgpackr. */
  private string(length: number, header: number): string {
    const src = this.src;
    const start = this.at;
    const end = start + length;
    if (end > src.length) throw UNSUPPORTED;
    let ascii = true;
    for (let i = start; i < end; i++) {
      if ((src[i] as number) >= 0x80) {
        ascii = false;
        break;
      }
    }
    this.at = end;
    if (!ascii || length > 4096) return decodeValueAt<string>(src, start - header, end);
    // Up to 12 characters `+=` makes flat strings; longer ones would be trees of pieces (kept as such in a state's
    // session or view key), so those are made in one call.
    if (length <= 12) {
      let out = '';
      for (let i = start; i < end; i++) out += String.fromCharCode(src[i] as number);
      return out;
    }
    return String.fromCharCode.apply(null, src.subarray(start, end) as unknown as number[]);
  }

  /** Steps over one value without building it. */
  private skip(): void {
    const src = this.src;
    const view = this.view;
    const token = src[this.at++] as number;
    if (token < 0x80 || token >= 0xe0) return;
    if (token < 0x90) return this.skipEntries(2 * (token - 0x80));
    if (token < 0xa0) return this.skipEntries(token - 0x90);
    if (token < 0xc0) {
      this.at += token - 0xa0;
      return;
    }
    const at = this.at;
    switch (token) {
      case 0xc0:
      case 0xc2:
      case 0xc3:
        return;
      case 0xcc:
      case 0xd0:
        this.at += 1;
        return;
      case 0xcd:
      case 0xd1:
        this.at += 2;
        return;
      case 0xca:
      case 0xce:
      case 0xd2:
        this.at += 4;
        return;
      case 0xcb:
        this.at += 8;
        return;
      case 0xd9:
        this.at += 1 + view.getUint8(at);
        return;
      case 0xda:
        this.at += 2 + view.getUint16(at);
        return;
      case 0xdb:
        this.at += 4 + view.getUint32(at);
        return;
      case 0xdc:
        this.at += 2;
        return this.skipEntries(view.getUint16(at));
      case 0xdd:
        this.at += 4;
        return this.skipEntries(view.getUint32(at));
      case 0xde:
        this.at += 2;
        return this.skipEntries(2 * view.getUint16(at));
      case 0xdf:
        this.at += 4;
        return this.skipEntries(2 * view.getUint32(at));
      default:
        throw UNSUPPORTED;
    }
  }

  private skipEntries(count: number): void {
    if (count > this.src.length - this.at) throw UNSUPPORTED;
    for (let i = 0; i < count; i++) this.skip();
  }
}
