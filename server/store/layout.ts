// The key layout of the store: every prefix the service writes, in one place. Keys are `prefix!part!part...`;
// '!' sorts before every character a part can start with, so `prefix!a!` scans exactly a's entries.
//
// meta         m!{name}                                   format version, partition count, secrets
//              m!partitions                               partition count, fixed at first open (server/ingest)
//              m!state-secret!{org}                       secret of stateless states: AES key by HKDF (D42), v1 HMAC (D23)
//              m!slot-set!{org}!{fingerprint}             sorted slot ids of a plan a stateless state was sealed under
//                                                         (its bitmap indexes them; engine/state/codec.ts format 3)
//              m!control-seq                              cluster node: last control-stream command applied (server/cluster)
//              m!node-id                                  cluster node: its name in the cluster (server/cluster/node.ts)
//              cw!{partition}                             cluster node: event-log sequence through which it applied the
//                                                         partition (server/cluster/owners.ts)
// tenancy      o!{org}                                    organization
//              w!{workspace}                              workspace record (organization_id, parent_id)
//              wc!{parent}!{child}                        children of a workspace
//              k!{keyHash}                                API key record, by SHA-256 of the key
//              ki!{keyId}                                 key id -> key hash (listing, revoking)
// cohorts      c!{org}!{cohortId}                         cohort record
//              cc!{org}!{code}                            code -> cohort id (code is fixed-width, see seqPart)
//              cn!{org}                                   next cohort code
//              cr!{org}!{code}!{referrerCode}             cohort `code` is named by cohort `referrerCode`
//              cv!{org}                                   plan version (bumped by cohort create/query/state/delete)
//              cs!{org}!{code}                            live audience size of a cohort (D19)
// identity     u!{org}!{user}                             user record
//              a!{org}!{tag}!{aliasId}                    alias -> user
//              ua!{org}!{user}!{tag}!{aliasId}            user -> aliases
// events       e!{org}!{user}!{seq}                       THE event record (stored once), per user in arrival order: replays
//                                                         after a snapshot's seq, retries' answers (README.md has why);
//                                                         or a block of the user's consecutive records ending at seq
//                                                         (README.md "Event blocks", domain/events/blocks.ts)
//              et!{org}!{user}!{time}!{seq}               per-user time index for reads (D29, D39) -> seq; time: events/keys.ts timePart
//              ei!{org}!{user}!{eventId}                  event id -> seq (idempotent retries, D29; not for an id the
//                                                         server minted with its event's time: found through et!)
//              l!{partition}!{seq}                        partition log: transitions, in commit order, at the seq of the
//                                                         event that caused them (none: no entry) or alone (catch-ups)
//              ps!{partition}                             the partition's last sequence (once per batch; lastSeq at open)
//              s!{org}!{user}                             user engine state snapshot {state, count, mark}, stamped with
//                                                         its log seq; mark = plan version caught up to (server/backfill)
//              sz!{org}!{code}!{partition}                [generation, count]: live audience size of a cohort within one
//                                                         partition (D19; the sum over partitions; server/ingest/tick/sizes.ts)
//              szj!{n}                                    the size counters one store batch changed, newer than their sz!
//                                                         (folded into sz! every 1,024 entries; server/ingest/tick/sizes.ts)
// reactions    r!{org}!{reactionId}                       reaction record with its signing secret (D37)
//              od!{reactionId}!{seq}                      delivery record (body, status, attempts), seq = global outbox
//                                                         sequence (commit order; id dlv_{seq}); server/domain/reactions
//              oq!{reactionId}!{seq}                      pending delivery queue (value: user id, per-user order)
//              os                                         last outbox sequence taken (once per batch that took one)
//              t!{cursor}                                 global transitions log in commit order (D38 stream cursors);
//                                                         value [org, user, event_id, at, moves, time, flags?]
//                                                         (server/domain/reactions/log.ts; older entries are maps)
//              tc                                         last transitions-log cursor taken (once per batch)
//              dl!{partition}!{time}!{org}!{user}         D36 deadline index: user due for re-evaluation at time
// backfill     bf!{org}                                   sweep cursor of an organization (resumable, server/backfill)
//              om!{org}!{code}!{user}                     member of an offline cohort (D20)
//              oc!{org}!{code}                            last computed result of an offline cohort (size, time)
// schemas      sc!{org}!{eventName}                       inferred schema of an event name (D30)
// imports      i!{org}!{importId}                         import record
//              ic!{org}!{code}                            import code -> import id
//              sg!{importId}!{segmentId}                  imported segment
//              sgc!{importId}!{code}                      segment code -> segment id
//              sgn!{importId}                             number of segments of the import (list total_count)
//              mb!{org}!{user}!{importId}!{segmentCode}   user is a member of an imported segment
//              ms!{importId}!{segmentCode}!{user}         members of a segment (deleting a segment deletes its mb)
//              smn!{importId}!{segmentCode}               number of members of a segment (absent in older stores)
//              mr!{org}!{user}!{importId}!{rowId}         connections row of a user
//              mri!{importId}!{rowId}                     connections row id -> user (re-loading a row replaces it)
// Free-form parts (alias ids and tags, codes, event names) go through `keyPart`; numbers through `seqPart`.

export const SEP = '!';

const UNSAFE_KEY_CHARS = /[^\x20-\x7e]|[!%]/g;

/**
 * Escapes a free-form string into printable ASCII without the separator: '!', '%', control and non-ASCII UTF-16 code
 * units become `%XXXX`. Keys are then pure ASCII, so LevelDB's byte order and JavaScript's code-unit order agree,
 * and lone surrogates survive the round trip.
 */
export function keyPart(value: string): string {
  return value.replace(UNSAFE_KEY_CHARS, (char) => '%' + char.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** Reverses keyPart. */
export function fromKeyPart(part: string): string {
  return part.replace(/%([0-9a-f]{4})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** A non-negative integer as fixed-width hex, so that key order is numeric order (up to 2^53). */
export function seqPart(value: number): string {
  return value.toString(16).padStart(14, '0');
}

export function fromSeqPart(part: string): number {
  return parseInt(part, 16);
}

/** Joins a prefix and parts into a key. */
export function key(prefix: string, ...parts: string[]): string {
  return parts.length === 0 ? prefix : prefix + SEP + parts.join(SEP);
}

/** The scan prefix for every key under `prefix!parts...!`. */
export function scanPrefix(prefix: string, ...parts: string[]): string {
  return key(prefix, ...parts) + SEP;
}
