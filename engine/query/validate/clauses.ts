// Clauses: tells the kind from the keys (`event` → expression; otherwise exactly one of the engagement, transition,
// membership or connections keys) and reads each kind except engagement (engagement.ts). Spec "Clause kinds", D33.

import type { Clause, ConnectionsClause, During, ExpressionClause, MembershipClause, NumberComparison, TransitionClause, Where } from '../ast.js';
import { expected, hasKey, isObject, quote, visitObject, visitSoleKey, type Findings } from './findings.js';
import { atLeastOnce, readComparison } from './comparison.js';
import { readDuring } from './during.js';
import { ENGAGEMENT_KEYS, readEngagement } from './engagement.js';
import { readInteger, readNonEmptyString, readNumber } from './values.js';
import { readWhere } from './where.js';

const EXPRESSION_KEYS = ['event', 'frequency', 'during', 'where'];
const TRANSITION_KEYS = ['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'] as const;
const MEMBERSHIP_KEYS = ['in_third_party_segment', 'not_in_third_party_segment', 'in_second_party_segment', 'not_in_second_party_segment'] as const;
const CONNECTIONS_KEYS = ['in_connections_import_segment', 'not_in_connections_import_segment'] as const;

/** The keys of the clause kinds written as an object with exactly one key. */
const ONE_KEY_KINDS = new Set<string>([...ENGAGEMENT_KEYS, ...TRANSITION_KEYS, ...MEMBERSHIP_KEYS, ...CONNECTIONS_KEYS]);

/** Event names as events are tracked (spec "Event", D29). */
const EVENT_NAME = /^[A-Za-z0-9_]{1,128}$/;

export function readClause(findings: Findings, value: unknown, path: string): Clause | undefined {
  if (!isObject(value)) {
    findings.problem(path, expected('object', value));
    return undefined;
  }
  const keys = Object.keys(value);
  const isOneKeyKind = keys.some((key) => ONE_KEY_KINDS.has(key));
  if (hasKey(value, 'event') || (!isOneKeyKind && keys.some((key) => EXPRESSION_KEYS.includes(key)))) {
    return readExpression(findings, value, path);
  }
  if (keys.length === 0) {
    findings.problem(path, 'expected a clause: an object with "event", or with exactly one clause key such as "has_entered"');
    return undefined;
  }
  return visitSoleKey<Clause>(findings, value, path, ONE_KEY_KINDS, (key, body, at) => {
    if (ENGAGEMENT_KEYS.includes(key)) return readEngagement(findings, key, body, at);
    if (isIn(TRANSITION_KEYS, key)) return readTransition(findings, key, body, at);
    if (isIn(MEMBERSHIP_KEYS, key)) return readMembership(findings, key, body, at);
    if (isIn(CONNECTIONS_KEYS, key)) return readConnections(findings, key, body, at);
    return undefined;
  });
}

function isIn<K extends string>(keys: readonly K[], key: string): key is K {
  return (keys as readonly string[]).includes(key);
}

/** `{event, frequency?, during?, where?}`: `event` required, `frequency` defaults to at least once (D33). */
function readExpression(findings: Findings, value: unknown, path: string): ExpressionClause | undefined {
  const before = findings.count;
  let event: string | undefined;
  let frequency: NumberComparison | undefined = atLeastOnce();
  let during: During | undefined;
  let where: Where | undefined;
  visitObject(findings, value, path, ['event'], (key, field, at) => {
    if (key === 'event') event = readEventName(findings, field, at);
    else if (key === 'frequency') frequency = readComparison(findings, field, at, readNumber);
    else if (key === 'during') during = readDuring(findings, field, at);
    else if (key === 'where') where = readWhere(findings, field, at, 'event', 0);
    else return false;
    return true;
  });
  if (findings.count !== before || event === undefined || frequency === undefined) return undefined;
  return { kind: 'expression', event, frequency, ...(during && { during }), ...(where && { where }) };
}

function readEventName(findings: Findings, value: unknown, path: string): string | undefined {
  const name = readNonEmptyString(findings, value, path);
  if (name === undefined) return undefined;
  if (!EVENT_NAME.test(name)) {
    findings.problem(path, `expected an event name of 1 to 128 characters A-Z, a-z, 0-9, _, got ${quote(name)}`);
    return undefined;
  }
  return name;
}

/** `{segment, during?, where?}`; `segment` is a cohort code, an integer >= 0, recorded as a reference (D18, D35). */
function readTransition(findings: Findings, op: TransitionClause['op'], value: unknown, path: string): TransitionClause | undefined {
  const before = findings.count;
  let segment: number | undefined;
  let during: During | undefined;
  let where: Where | undefined;
  visitObject(findings, value, path, ['segment'], (key, field, at) => {
    if (key === 'segment') segment = readInteger(findings, field, at, 0);
    else if (key === 'during') during = readDuring(findings, field, at);
    else if (key === 'where') where = readWhere(findings, field, at, 'event', 0);
    else return false;
    return true;
  });
  if (findings.count !== before || segment === undefined) return undefined;
  findings.references.add(segment);
  return { kind: 'transition', op, segment, ...(during && { during }), ...(where && { where }) };
}

/** `{provider, segment}`, both non-empty strings, nothing else (D27). */
function readMembership(findings: Findings, op: MembershipClause['op'], value: unknown, path: string): MembershipClause | undefined {
  const before = findings.count;
  let provider: string | undefined;
  let segment: string | undefined;
  visitObject(findings, value, path, ['provider', 'segment'], (key, field, at) => {
    if (key === 'provider') provider = readNonEmptyString(findings, field, at);
    else if (key === 'segment') segment = readNonEmptyString(findings, field, at);
    else return false;
    return true;
  });
  if (findings.count !== before || provider === undefined || segment === undefined) return undefined;
  return { kind: 'membership', op, provider, segment };
}

/** `{provider, filters?, during?, frequency?}`; filter names carry no `properties.` prefix (D27, E14). */
function readConnections(findings: Findings, op: ConnectionsClause['op'], value: unknown, path: string): ConnectionsClause | undefined {
  const before = findings.count;
  let provider: string | undefined;
  let filters: Where | undefined;
  let during: During | undefined;
  let frequency: NumberComparison | undefined = atLeastOnce();
  visitObject(findings, value, path, ['provider'], (key, field, at) => {
    if (key === 'provider') provider = readNonEmptyString(findings, field, at);
    else if (key === 'filters') filters = readWhere(findings, field, at, 'relative', 0);
    else if (key === 'during') during = readDuring(findings, field, at);
    else if (key === 'frequency') frequency = readComparison(findings, field, at, readNumber);
    else return false;
    return true;
  });
  if (findings.count !== before || provider === undefined || frequency === undefined) return undefined;
  return { kind: 'connections', op, provider, ...(filters && { filters }), ...(during && { during }), frequency };
}
