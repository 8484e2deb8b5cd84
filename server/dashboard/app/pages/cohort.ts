// One cohort: its state, type, live size and the evaluation of its history while it runs (D19); charts of its size
// and of entries and exits per minute over the last day (the series route); edit; enable or disable; recompute an
// offline one (D20); delete (a 409 names the cohorts whose queries name it, D18).

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import type { Session } from '../main.js';
import { ActionButton, count, ErrorLine, useLoad, when } from '../ui.js';
import { Chart } from '../chart.js';
import { CohortForm, type CohortFull } from './cohort-form.js';
import { progressText } from './cohorts.js';

interface Series {
  size: number;
  minutes: { time: string; size: number; entered: number; exited: number }[];
}

export function CohortPage({ session, id }: { session: Session; id: string }) {
  const cohort = useLoad(() => session.api.get<CohortFull>(`/cohorts-api/v2/cohorts/${id}`), [id]);
  const series = useLoad(() => session.api.get<Series>(`/cohorts-api/v2/cohorts/${id}/series`), [id]);
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const c = cohort.data;

  // Live: a transition of this cohort moves the size at once. The cohort and its charts are read again shortly after
  // (at most every 2 s) and whenever the stream reopens: a read already in flight when a transition arrived answers
  // the size before it, and would otherwise leave the page a step behind until the next transition.
  const resync = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(resync.current), []);
  useEffect(() => {
    const again = () => {
      cohort.reload();
      series.reload();
    };
    const offOpen = session.live?.onOpen(again);
    const off = session.live?.subscribe((t) => {
      if (t.cohort.id !== id || cohort.data === undefined || cohort.data.live_audience_size === undefined) return;
      cohort.set({ ...cohort.data, live_audience_size: Math.max(0, cohort.data.live_audience_size + (t.kind === 'entered' ? 1 : -1)) });
      resync.current ??= setTimeout(() => {
        resync.current = undefined;
        again();
      }, 2000);
    });
    return () => {
      offOpen?.();
      off?.();
    };
  }, [id, cohort.data]);

  // While history is being evaluated, follow its progress.
  const running = c?.backfill !== undefined && c.backfill.state !== 'done';
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => {
      cohort.reload();
      series.reload();
    }, 1000);
    return () => clearInterval(timer);
  }, [running]);

  const charts = useMemo(() => {
    const minutes = series.data?.minutes ?? [];
    const times = minutes.map((m) => Date.parse(m.time) / 1000);
    return {
      times,
      size: [{ label: 'members', color: '#2563eb', values: minutes.map((m) => m.size) }],
      flow: [
        { label: 'entries / min', color: '#16a34a', values: minutes.map((m) => m.entered) },
        { label: 'exits / min', color: '#dc2626', values: minutes.map((m) => m.exited) },
      ],
    };
  }, [series.data]);

  if (cohort.error !== undefined) return html`<${ErrorLine} error=${cohort.error} />`;
  if (c === undefined) return html`<p>Loading…</p>`;
  const toggle = () => session.api.send<CohortFull>('PATCH', `/cohorts-api/v2/cohorts/${id}`, { state: c.state === 'Enabled' ? 'Disabled' : 'Enabled' }).then(cohort.set);
  const remove = async () => {
    if (!confirm(`Delete the cohort "${c.name}"?`)) return;
    await session.api.send('DELETE', `/cohorts-api/v2/cohorts/${id}`);
    location.hash = '#/cohorts';
  };
  const recompute = () => session.api.send<CohortFull>('POST', `/cohorts-api/v2/cohorts/${id}/recompute`).then(cohort.set);
  return html`<section aria-labelledby="cohort-title">
    <p><a href="#/cohorts">← Cohorts</a></p>
    <div class="bar">
      <h1 id="cohort-title">${c.name}</h1>
      <span class=${`badge ${c.state === 'Enabled' ? 'on' : 'off'}`}>${c.state}</span>
      <span class="badge">${c.segment_type === 'real_time' ? 'real-time' : 'offline'}</span>
    </div>
    ${c.description === undefined ? null : html`<p>${c.description}</p>`}
    <dl class="facts">
      <dt>Members</dt><dd class="size" data-size=${c.live_audience_size ?? ''}>${count(c.live_audience_size)}</dd>
      <dt>Code</dt><dd>${c.code}</dd>
      <dt>Tags</dt><dd>${c.tags.length === 0 ? '–' : c.tags.join(', ')}</dd>
      <dt>Updated</dt><dd>${when((c as unknown as { last_updated_at: string }).last_updated_at)}</dd>
      ${running ? html`<dt>Evaluation</dt><dd class="progress" role="status">${progressText(c.backfill)}</dd>` : null}
    </dl>
    <div class="actions">
      <button type="button" onClick=${() => setEditing(!editing)} aria-expanded=${editing}>${editing ? 'Close editor' : 'Edit'}</button>
      <${ActionButton} label=${c.state === 'Enabled' ? 'Disable' : 'Enable'} run=${toggle} onError=${setError} />
      ${c.segment_type === 'offline' ? html`<${ActionButton} label="Recompute" run=${recompute} onError=${setError} />` : null}
      <${ActionButton} label="Delete" kind="danger" run=${remove} onError=${setError} />
    </div>
    <${ErrorLine} error=${error} />
    ${editing ? html`<${CohortForm} session=${session} cohort=${c} onSaved=${() => (setEditing(false), cohort.reload(), series.reload())} />` : null}
    <h2>Last 24 hours</h2>
    <${ErrorLine} error=${series.error} />
    <div class="charts">
      <${Chart} title="Members" times=${charts.times} series=${charts.size} />
      <${Chart} title="Entries and exits per minute" times=${charts.times} series=${charts.flow} />
    </div>
    <h2>Query</h2>
    <pre class="code">${JSON.stringify(c.query, null, 2)}</pre>
  </section>`;
}
