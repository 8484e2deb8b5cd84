// Store keys of imports, segments, memberships and connections rows (see server/store/layout.ts, section imports).
// Every free-form part goes through keyPart so that codes containing '!' or '%' cannot break a scan.

import { key, keyPart, scanPrefix } from '../../store/layout.js';

export const importKey = (org: string, importId: string) => key('i', keyPart(org), keyPart(importId));
export const importsScan = (org: string) => scanPrefix('i', keyPart(org));
export const importCodeKey = (org: string, code: string) => key('ic', keyPart(org), keyPart(code));

export const segmentKey = (importId: string, segmentId: string) => key('sg', keyPart(importId), keyPart(segmentId));
export const segmentCodeKey = (importId: string, code: string) => key('sgc', keyPart(importId), keyPart(code));
export const segmentCodesScan = (importId: string) => scanPrefix('sgc', keyPart(importId));
export const segmentCountKey = (importId: string) => key('sgn', keyPart(importId));

export const membershipKey = (org: string, user: string, importId: string, segmentCode: string) =>
  key('mb', keyPart(org), keyPart(user), keyPart(importId), keyPart(segmentCode));
export const membershipsScan = (org: string, user: string) => scanPrefix('mb', keyPart(org), keyPart(user));
export const segmentMemberKey = (importId: string, segmentCode: string, user: string) =>
  key('ms', keyPart(importId), keyPart(segmentCode), keyPart(user));
export const segmentMemberCountKey = (importId: string, segmentCode: string) => key('smn', keyPart(importId), keyPart(segmentCode));
export const segmentMembersScan = (importId: string, segmentCode: string) =>
  scanPrefix('ms', keyPart(importId), keyPart(segmentCode));

export const rowKey = (org: string, user: string, importId: string, rowId: string) =>
  key('mr', keyPart(org), keyPart(user), keyPart(importId), keyPart(rowId));
export const rowsScan = (org: string, user: string) => scanPrefix('mr', keyPart(org), keyPart(user));
export const rowOwnerKey = (importId: string, rowId: string) => key('mri', keyPart(importId), keyPart(rowId));
