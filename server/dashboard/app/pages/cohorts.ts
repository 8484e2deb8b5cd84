// Cohorts: every cohort the key sees with its state, type and live size, sizes moving as users enter and leave
// (the live stream, D38; a resync from the API every 20 s and whenever the stream reopens), and a new cohort form.

import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import type { Session } from '../main.js';
import { count, ErrorLine, useLoad } from '../ui.js';
import { CohortForm } from './cohort-form.js';

export interface CohortSummary {
  id: string;
  code: number;
  name: string;
  description?: string;
  tags: string[];
  state: 'Enabled' | 'Disabled';
  workspace_id: string;
  segment_type: 'real_time' | 'offline';
  live_audience_size?: number;
  backfill?: { state: string; users_done: number; users_total: number };
}

export function progressText(backfill: CohortSummary['backfill']): string {
  if (backfill === undefined || backfill.state === 'done') return '';
  return backfill.users_total === 0 ? 'counting users…' : `evaluating history: ${count(backfill.users_done)} of ${count(backfill.users_total)} users`;
}

/** Live sizes: the list from the API, moved by each transition of the stream. */
export function useLiveCohorts(session: Session) {
  const loaded = useLoad(() => session.api.get<CohortSummary[]>('/cohorts-api/v2/cohorts?include-child-workspaces=' + String(session.access.admin)), []);
  const { data, reload, set } = loaded;
  useEffect(() => {
    const live = session.live;
    const timer = setInterval(reload, 20_000);
    const offOpen = live?.onOpen(reload);
    const off = live?.subscribe((t) => {
      const cohort = data?.find((c) => c.id === t.cohort.id);
      if (data === undefined || cohort?.live_audience_size === undefined) return;
      const size = Math.max(0, cohort.live_audience_size + (t.kind === 'entered' ? 1 : -1));
      set(data.map((c) => (c === cohort ? { ...c, live_audience_size: size } : c)));
    });
    return () => {
      clearInterval(timer);
      offOpen?.();
      off?.();
    };
  }, [data, reload, set]);
  return loaded;
}

export function CohortsPage({ session }: { session: Session }) {
  const cohorts = useLiveCohorts(session);
  const [creating, setCreating] = useState(false);
  const [filter, setFilter] = useState('');
  const list = (cohorts.data ?? []).filter((c) => filter === '' || c.name.toLowerCase().includes(filter.toLowerCase()) || String(c.code) === filter);
  return html`<section aria-labelledby="cohorts-title">
    <div class="bar">
      <h1 id="cohorts-title">Cohorts</h1>
      <input type="search" aria-label="Filter cohorts by name or code" placeholder="Filter" value=${filter} onInput=${(e: Event) => setFilter((e.target as HTMLInputElement).value)} />
      <button type="button" onClick=${() => setCreating(!creating)} aria-expanded=${creating}>${creating ? 'Close' : 'New cohort'}</button>
    </div>
    ${creating ? html`<${CohortForm} session=${session} onSaved=${(id: string) => (location.hash = `#/cohorts/${id}`)} />` : null}
    <${ErrorLine} error=${cohorts.error} />
    ${cohorts.data === undefined && cohorts.error === undefined ? html`<p>Loading…</p>` : null}
    <div class="scroll">
      <table class="cohorts">
        <thead><tr><th>Name</th><th>Code</th><th>Type</th><th>State</th><th class="num">Members</th><th>Evaluation</th></tr></thead>
        <tbody>
          ${list.map(
            (c) => html`<tr key=${c.id} data-cohort=${c.id}>
              <td><a href=${`#/cohorts/${c.id}`}>${c.name}</a></td>
              <td>${c.code}</td>
              <td>${c.segment_type === 'real_time' ? 'real-time' : 'offline'}</td>
              <td><span class=${`badge ${c.state === 'Enabled' ? 'on' : 'off'}`}>${c.state}</span></td>
              <td class="num size">${count(c.live_audience_size)}</td>
              <td>${progressText(c.backfill)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${cohorts.data !== undefined && list.length === 0 ? html`<p>No cohorts${filter === '' ? ' yet' : ' match'}.</p>` : null}
  </section>`;
}
