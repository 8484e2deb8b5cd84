// Reactions (D37): webhooks on a cohort's entries, exits or members' page loads. List, create (the signing secret
// is shown once), pause and resume, delete; a reaction's recent deliveries with their status and a retry for a
// failed one.

import { useState } from 'preact/hooks';
import { html } from '../html.js';
import type { Session } from '../main.js';
import { ActionButton, ErrorLine, describe, useLoad, when } from '../ui.js';
import type { CohortSummary } from './cohorts.js';

interface Reaction {
  id: string;
  name: string;
  cohort_id: string;
  cohort_code: number;
  trigger: 'on_entry' | 'on_exit' | 'every_time';
  action: { type: 'webhook'; url: string };
  state: 'Enabled' | 'Disabled';
  created_at: string;
}

interface Delivery {
  id: string;
  status: 'pending' | 'failed' | 'delivered';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  user_id: string;
}

const TRIGGERS = { on_entry: 'On entry', on_exit: 'On exit', every_time: 'Every page load' } as const;

function NewReaction({ session, cohorts, onCreated }: { session: Session; cohorts: CohortSummary[]; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [cohortId, setCohortId] = useState('');
  const [trigger, setTrigger] = useState<keyof typeof TRIGGERS>('on_entry');
  const [url, setUrl] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [secret, setSecret] = useState<string | undefined>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      const created = await session.api.send<Reaction & { secret: string }>('POST', '/reactions-api/v1/reactions', { name, cohort_id: cohortId, trigger, action: { type: 'webhook', url } });
      setSecret(created.secret);
      onCreated();
    } catch (e) {
      setError(describe(e));
    }
  };
  return html`<form class="card form" onSubmit=${submit} aria-label="New reaction">
    <label for="reaction-name">Name</label>
    <input id="reaction-name" value=${name} required onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
    <label for="reaction-cohort">Cohort</label>
    <select id="reaction-cohort" value=${cohortId} required onChange=${(e: Event) => setCohortId((e.target as HTMLSelectElement).value)}>
      <option value="">Choose a cohort</option>
      ${cohorts.map((c) => html`<option value=${c.id}>${c.name} (${c.code})</option>`)}
    </select>
    <label for="reaction-trigger">Trigger</label>
    <select id="reaction-trigger" value=${trigger} onChange=${(e: Event) => setTrigger((e.target as HTMLSelectElement).value as keyof typeof TRIGGERS)}>
      ${Object.entries(TRIGGERS).map(([value, label]) => html`<option value=${value}>${label}</option>`)}
    </select>
    <label for="reaction-url">Webhook URL</label>
    <input id="reaction-url" type="url" placeholder="https://example.com/hooks/audience" value=${url} required onInput=${(e: Event) => setUrl((e.target as HTMLInputElement).value)} />
    <button type="submit">Create reaction</button>
    <${ErrorLine} error=${error} />
    ${secret === undefined
      ? null
      : html`<div class="secret" role="status"><p>Signing secret (shown once; deliveries carry <code>X-Audience-Signature</code>):</p><code class="once">${secret}</code></div>`}
  </form>`;
}

function Deliveries({ session, reaction }: { session: Session; reaction: Reaction }) {
  const [status, setStatus] = useState('');
  const deliveries = useLoad(() => session.api.get<Delivery[]>(`/reactions-api/v1/reactions/${reaction.id}/deliveries?limit=100${status === '' ? '' : `&status=${status}`}`), [reaction.id, status]);
  const [error, setError] = useState<string | undefined>();
  return html`<section class="card" aria-labelledby="deliveries-title">
    <div class="bar">
      <h2 id="deliveries-title">Recent deliveries of ${reaction.name}</h2>
      <label for="delivery-status">Status</label>
      <select id="delivery-status" value=${status} onChange=${(e: Event) => setStatus((e.target as HTMLSelectElement).value)}>
        <option value="">all</option><option value="pending">pending</option><option value="failed">failed</option><option value="delivered">delivered</option>
      </select>
      <button type="button" onClick=${deliveries.reload}>Refresh</button>
    </div>
    <${ErrorLine} error=${deliveries.error ?? error} />
    <div class="scroll"><table>
      <thead><tr><th>Delivery</th><th>User</th><th>Status</th><th>Attempts</th><th>Last answer</th><th>Last attempt</th><th>Next attempt</th><th></th></tr></thead>
      <tbody>
        ${(deliveries.data ?? []).map(
          (d) => html`<tr key=${d.id} data-delivery=${d.id}>
            <td><code>${d.id}</code></td><td><a href=${`#/users/${d.user_id}`}>${d.user_id.slice(0, 8)}…</a></td>
            <td><span class=${`badge ${d.status}`}>${d.status}</span></td><td>${d.attempts}</td>
            <td>${d.last_status ?? d.last_error ?? '–'}</td><td>${when(d.last_attempt_at)}</td><td>${when(d.next_attempt_at)}</td>
            <td>${d.status === 'failed' ? html`<${ActionButton} label="Retry" run=${() => session.api.send('POST', `/reactions-api/v1/reactions/${reaction.id}/deliveries/${d.id}/retry`).then(deliveries.reload)} onError=${setError} />` : null}</td>
          </tr>`,
        )}
      </tbody>
    </table></div>
    ${deliveries.data?.length === 0 ? html`<p>No deliveries${status === '' ? ' yet' : ` ${status}`}.</p>` : null}
  </section>`;
}

export function ReactionsPage({ session, id }: { session: Session; id?: string }) {
  const reactions = useLoad(() => session.api.get<Reaction[]>('/reactions-api/v1/reactions'), []);
  const cohorts = useLoad(() => session.api.get<CohortSummary[]>('/cohorts-api/v2/cohorts'), []);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const nameOf = (cohortId: string) => cohorts.data?.find((c) => c.id === cohortId)?.name ?? cohortId;
  const selected = reactions.data?.find((r) => r.id === id);
  return html`<section aria-labelledby="reactions-title">
    <div class="bar">
      <h1 id="reactions-title">Reactions</h1>
      <button type="button" onClick=${() => setCreating(!creating)} aria-expanded=${creating}>${creating ? 'Close' : 'New reaction'}</button>
    </div>
    ${creating ? html`<${NewReaction} session=${session} cohorts=${cohorts.data ?? []} onCreated=${reactions.reload} />` : null}
    <${ErrorLine} error=${reactions.error ?? error} />
    <div class="scroll"><table>
      <thead><tr><th>Name</th><th>Cohort</th><th>Trigger</th><th>Webhook</th><th>State</th><th></th></tr></thead>
      <tbody>
        ${(reactions.data ?? []).map(
          (r) => html`<tr key=${r.id} data-reaction=${r.id}>
            <td><a href=${`#/reactions/${r.id}`}>${r.name}</a></td>
            <td><a href=${`#/cohorts/${r.cohort_id}`}>${nameOf(r.cohort_id)}</a></td>
            <td>${TRIGGERS[r.trigger]}</td><td class="url">${r.action.url}</td>
            <td><span class=${`badge ${r.state === 'Enabled' ? 'on' : 'off'}`}>${r.state === 'Enabled' ? 'Active' : 'Paused'}</span></td>
            <td class="row-actions">
              <${ActionButton} label=${r.state === 'Enabled' ? 'Pause' : 'Resume'} run=${() => session.api.send('PATCH', `/reactions-api/v1/reactions/${r.id}`, { state: r.state === 'Enabled' ? 'Disabled' : 'Enabled' }).then(reactions.reload)} onError=${setError} />
              <${ActionButton} label="Delete" kind="danger" run=${async () => confirm(`Delete the reaction "${r.name}"?`) && (await session.api.send('DELETE', `/reactions-api/v1/reactions/${r.id}`), reactions.reload())} onError=${setError} />
            </td>
          </tr>`,
        )}
      </tbody>
    </table></div>
    ${reactions.data?.length === 0 ? html`<p>No reactions yet.</p>` : null}
    ${selected === undefined ? null : html`<${Deliveries} session=${session} reaction=${selected} />`}
  </section>`;
}
