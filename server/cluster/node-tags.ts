// Which node holds a reaction's delivery (issue 15, D37). A delivery lives in the outbox of the node that logged it
// (the owner of the user's partition then), and its id is that outbox's sequence (`dlv_{seq}`). So that ids are unique
// across the cluster and name their node, each node claims a small number, its tag, once (KV `create` in the bucket
// `audience_node_tags`: `t{tag}` → node id; kept in the node's store), and its outbox sequence starts at
// tag × 2^40: the tag is the id's top bits. Up to 8,191 nodes with 2^40 deliveries each stay within exact integers.

import type { KV } from '@nats-io/kv';
import type { Store } from '../store/contract.js';
import { key } from '../store/layout.js';
import { deliverySeqOf, reactionsKeys } from '../domain/reactions/contract.js';

export const TAGS_BUCKET = 'audience_node_tags';
const TAG_KEY = key('m', 'node-tag');
const LOCAL_BITS = 2 ** 40;
export const MAX_TAG = 8191;

const tagKey = (tag: number): string => `t${tag}`;

/** This node's tag: the one its store kept, else the lowest free one claimed now (and kept). */
export async function claimNodeTag(store: Store, tags: KV, node: string): Promise<number> {
  const known = await store.get<number>(TAG_KEY);
  if (typeof known === 'number') {
    const holder = (await tags.get(tagKey(known)))?.string();
    if (holder !== node) await tags.put(tagKey(known), node);
    return known;
  }
  for (let tag = 1; tag <= MAX_TAG; tag++) {
    try {
      await tags.create(tagKey(tag), node);
    } catch {
      // Taken (by this node too, when its store lost the tag: it takes a new one; the old one's ids stay its own).
      continue;
    }
    await store.batch([{ type: 'put', key: TAG_KEY, value: tag }], { sync: true });
    return tag;
  }
  throw new Error(`every node tag up to ${MAX_TAG} is taken (the bucket ${TAGS_BUCKET})`);
}

/** Moves the outbox sequence into the tag's range (the first start in a cluster), before the pipeline reads it. */
export async function startOutboxAtTag(store: Store, tag: number): Promise<void> {
  const base = tag * LOCAL_BITS;
  const current = await store.get<number>(reactionsKeys.outboxSeq());
  if (typeof current === 'number' && current >= base && current < base + LOCAL_BITS) return;
  if (typeof current === 'number' && current > base) throw new Error(`this store's outbox sequence ${current} is past the range of node tag ${tag}`);
  await store.batch([{ type: 'put', key: reactionsKeys.outboxSeq(), value: base }], { sync: true });
}

/** The tag of the node holding delivery `id`; undefined when it is not a delivery id. */
export function tagOfDelivery(id: string): number | undefined {
  const seq = deliverySeqOf(id);
  return seq === undefined ? undefined : Math.floor(seq / LOCAL_BITS);
}

/** The node that claimed `tag` (undefined: none). */
export async function nodeOfTag(tags: KV, tag: number): Promise<string | undefined> {
  return (await tags.get(tagKey(tag)))?.string() || undefined;
}
