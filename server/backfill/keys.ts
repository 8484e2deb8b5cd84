// Store keys of the backfill area (to add to server/store/layout.ts): the sweep record of an organization
// `bf!{org}` (resumable cursor), offline cohort members `om!{org}!{code}!{user}` and results `oc!{org}!{code}`.

import { key, scanPrefix, seqPart } from '../store/layout.js';

export const sweepKey = (org: string): string => key('bf', org);
export const offlineMemberKey = (org: string, code: number, user: string): string => key('om', org, seqPart(code), user);
export const offlineMembersPrefix = (org: string, code: number): string => scanPrefix('om', org, seqPart(code));
export const offlineResultKey = (org: string, code: number): string => key('oc', org, seqPart(code));
