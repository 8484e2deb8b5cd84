// Users: look one up by id or by alias (`tag:id`); its aliases, the cohorts it is in now, its events page by page
// (D39) and "explain": which clauses of a cohort's query hold for it. A public key sees the events only (D6).

import { useState } from 'preact/hooks';
import { html } from '../html.js';
import type { Session } from '../main.js';
import { nextLink } from '../api.js';
import { ErrorLine, describe, useLoad, when } from '../ui.js';
import type { CohortSummary } from './cohorts.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface EventRecord {
  id: string;
  name: string;
  time: string;
  properties: Record<string, unknown>;
}

interface Explanation {
  live_member: boolean;
  member: boolean;
  events: number;
  groups: { path: string; holds: boolean; clauses: { path: string; clause: unknown; holds: boolean }[] }[];
}

async function resolve(session: Session, query: string): Promise<string> {
  if (UUID.test(query)) return query.toLowerCase();
  const colon = query.indexOf(':');
  if (colon <= 0) throw new Error('Enter a user id (UUID) or an alias as tag:id, e.g. email:ada@example.com');
  const alias = await session.api.get<{ platform_id: string }>(`/v2.0/aliases/${encodeURIComponent(query.slice(0, colon))}/${encodeURIComponent(query.slice(colon + 1))}`);
  return alias.platform_id;
}

function Events({ session, user }: { session: Session; user: string }) {
  const first = `/v2.0/events?user_id=${user}`;
  const [pages, setPages] = useState<string[]>([first]);
  const page = pages[pages.length - 1] as string;
  const events = useLoad(() => session.api.call<EventRecord[]>('GET', page), [page]);
  const next = events.data === undefined ? undefined : nextLink(events.data.headers);
  return html`<section class="card" aria-labelledby="events-title">
    <div class="bar">
      <h2 id="events-title">Events</h2>
      <button type="button" disabled=${pages.length === 1} onClick=${() => setPages(pages.slice(0, -1))}>Previous page</button>
      <button type="button" disabled=${next === undefined} onClick=${() => next !== undefined && setPages([...pages, next])}>Next page</button>
      <span>page ${pages.length}</span>
    </div>
    <${ErrorLine} error=${events.error} />
    <div class="scroll"><table>
      <thead><tr><th>Time</th><th>Name</th><th>Properties</th></tr></thead>
      <tbody>${(events.data?.body ?? []).map((e) => html`<tr key=${e.id}><td>${when(e.time)}</td><td>${e.name}</td><td><code>${JSON.stringify(e.properties)}</code></td></tr>`)}</tbody>
    </table></div>
  </section>`;
}

function Explain({ session, user }: { session: Session; user: string }) {
  const cohorts = useLoad(() => session.api.get<CohortSummary[]>('/cohorts-api/v2/cohorts'), []);
  const [cohortId, setCohortId] = useState('');
  const [result, setResult] = useState<Explanation | undefined>();
  const [error, setError] = useState<string | undefined>();
  const run = async (id: string) => {
    setCohortId(id);
    setResult(undefined);
    setError(undefined);
    if (id === '') return;
    try {
      setResult(await session.api.get<Explanation>(`/cohorts-api/v2/cohorts/${id}/explain?user_id=${user}`));
    } catch (e) {
      setError(describe(e));
    }
  };
  const mark = (holds: boolean) => html`<span class=${`badge ${holds ? 'on' : 'off'}`}>${holds ? 'holds' : 'does not hold'}</span>`;
  return html`<section class="card" aria-labelledby="explain-title">
    <div class="bar">
      <h2 id="explain-title">Explain</h2>
      <label for="explain-cohort">Why is this user in or out of</label>
      <select id="explain-cohort" value=${cohortId} onChange=${(e: Event) => void run((e.target as HTMLSelectElement).value)}>
        <option value="">choose a cohort</option>
        ${(cohorts.data ?? []).map((c) => html`<option value=${c.id}>${c.name} (${c.code})</option>`)}
      </select>
    </div>
    <${ErrorLine} error=${error} />
    ${result === undefined
      ? null
      : html`<div class="explain">
          <p>Over ${result.events} events, now: the query ${mark(result.member)}; the user is ${result.live_member ? 'in' : 'not in'} the cohort.</p>
          <ol>
            ${result.groups.map(
              (g) => html`<li>${mark(g.holds)} <small>${g.path}</small>${g.clauses.length > 1 ? ' (any of)' : ''}
                <ul>${g.clauses.map((c) => html`<li>${mark(c.holds)} <code>${JSON.stringify(c.clause)}</code></li>`)}</ul>
              </li>`,
            )}
          </ol>
        </div>`}
  </section>`;
}

function UserView({ session, user }: { session: Session; user: string }) {
  const priv = session.access.private;
  const aliases = useLoad(() => (priv ? session.api.get<{ id: string; tag: string }[]>(`/v2.0/users/${user}/aliases`) : Promise.resolve([])), [user]);
  const cohorts = useLoad(() => (priv ? session.api.get<{ id: string; name: string; code: number }[]>(`/cohorts-api/v2/users/${user}/cohorts`) : Promise.resolve([])), [user]);
  return html`<div>
    <h2>User <code>${user}</code></h2>
    ${priv
      ? html`<div class="two">
          <section class="card"><h3>Aliases</h3><${ErrorLine} error=${aliases.error} />
            <ul>${(aliases.data ?? []).map((a) => html`<li><code>${a.tag}:${a.id}</code></li>`)}</ul>
            ${aliases.data?.length === 0 ? html`<p>None.</p>` : null}</section>
          <section class="card"><h3>In cohorts now</h3><${ErrorLine} error=${cohorts.error} />
            <ul class="user-cohorts">${(cohorts.data ?? []).map((c) => html`<li><a href=${`#/cohorts/${c.id}`}>${c.name}</a> (${c.code})</li>`)}</ul>
            ${cohorts.data?.length === 0 ? html`<p>None.</p>` : null}</section>
        </div>`
      : null}
    <${Events} session=${session} user=${user} />
    ${priv ? html`<${Explain} session=${session} user=${user} />` : null}
  </div>`;
}

export function UsersPage({ session, query }: { session: Session; query?: string }) {
  const [text, setText] = useState(query ?? '');
  const user = useLoad(() => (query === undefined || query === '' ? Promise.resolve(undefined) : resolve(session, query)), [query]);
  const submit = (event: Event) => {
    event.preventDefault();
    location.hash = `#/users/${encodeURIComponent(text.trim())}`;
  };
  return html`<section aria-labelledby="users-title">
    <h1 id="users-title">Users</h1>
    <form class="bar" onSubmit=${submit} role="search">
      <label for="user-query">User id or alias (tag:id)</label>
      <input id="user-query" value=${text} onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} placeholder="5f0c… or email:ada@example.com" />
      <button type="submit">Look up</button>
    </form>
    <${ErrorLine} error=${user.error} />
    ${user.data === undefined ? null : html`<${UserView} session=${session} user=${user.data} />`}
  </section>`;
}
