// Create or edit a cohort: name, description, tags, type (on create) and the query as JSON. The server validates
// (D18); a problem in the query is shown with its JSON path and the part of the text it names is selected.

import { useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import type { Session } from '../main.js';
import { ApiError } from '../api.js';
import { describe } from '../ui.js';
import { locate, pathSteps } from '../json-locate.js';
import type { CohortSummary } from './cohorts.js';

export interface CohortFull extends CohortSummary {
  query: unknown;
}

interface Problem {
  readonly path: string | undefined;
  readonly message: string;
}

const EXAMPLE = '{\n  "event": "Pageview",\n  "frequency": { "greater_than_or_equal_to": 3 },\n  "during": { "the_last": { "value": 7, "unit": "days" } }\n}';

export function CohortForm({ session, cohort, onSaved }: { session: Session; cohort?: CohortFull; onSaved: (id: string) => void }) {
  const [name, setName] = useState(cohort?.name ?? '');
  const [description, setDescription] = useState(cohort?.description ?? '');
  const [tags, setTags] = useState((cohort?.tags ?? []).join(', '));
  const [type, setType] = useState<'real_time' | 'offline'>(cohort?.segment_type ?? 'real_time');
  const [query, setQuery] = useState(cohort === undefined ? EXAMPLE : JSON.stringify(cohort.query, null, 2));
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  const editor = useRef<HTMLTextAreaElement>(null);

  const select = (path: string) => {
    const span = locate(query, pathSteps(path));
    const area = editor.current;
    if (span === undefined || area === null) return;
    area.focus();
    area.setSelectionRange(span.start, span.end);
  };

  const save = async (event: Event) => {
    event.preventDefault();
    setProblem(undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(query);
    } catch (e) {
      setProblem({ path: undefined, message: `The query is not valid JSON: ${(e as Error).message}` });
      return;
    }
    const body: Record<string, unknown> = {
      name,
      description: description.trim() === '' ? null : description,
      tags: tags.split(',').map((t) => t.trim()).filter((t) => t !== ''),
      query: parsed,
    };
    if (cohort === undefined) {
      body['segment_type'] = type;
      if (body['description'] === null) delete body['description'];
    }
    setBusy(true);
    try {
      const saved = cohort === undefined ? await session.api.send<CohortFull>('POST', '/cohorts-api/v2/cohorts', body) : await session.api.send<CohortFull>('PATCH', `/cohorts-api/v2/cohorts/${cohort.id}`, body);
      onSaved(saved.id);
    } catch (e) {
      const cause = e instanceof ApiError ? e.cause : undefined;
      const match = cause === undefined ? null : /^(query(?:[.[][^:]*)?): (.*)$/.exec(cause);
      if (match !== null) {
        setProblem({ path: match[1], message: match[2] as string });
        select(match[1] as string);
      } else setProblem({ path: undefined, message: describe(e) });
    } finally {
      setBusy(false);
    }
  };

  const field = (id: string, label: string, value: string, set: (v: string) => void, required = false) =>
    html`<label for=${id}>${label}</label><input id=${id} value=${value} required=${required} onInput=${(e: Event) => set((e.target as HTMLInputElement).value)} />`;

  return html`<form class="card form" onSubmit=${save} aria-label=${cohort === undefined ? 'New cohort' : 'Edit cohort'}>
    ${field('cohort-name', 'Name', name, setName, true)}
    ${field('cohort-description', 'Description', description, setDescription)}
    ${field('cohort-tags', 'Tags (comma-separated)', tags, setTags)}
    ${cohort === undefined
      ? html`<label for="cohort-type">Type</label>
          <select id="cohort-type" value=${type} onChange=${(e: Event) => setType((e.target as HTMLSelectElement).value as 'real_time' | 'offline')}>
            <option value="real_time">real-time (evaluated on every event)</option>
            <option value="offline">offline (computed over history on demand)</option>
          </select>`
      : null}
    <label for="cohort-query">Query (JSON)</label>
    <textarea id="cohort-query" ref=${editor} rows="12" spellcheck="false" aria-invalid=${problem !== undefined} aria-describedby="query-problem" value=${query} onInput=${(e: Event) => setQuery((e.target as HTMLTextAreaElement).value)}></textarea>
    <div id="query-problem" aria-live="polite">
      ${problem === undefined
        ? null
        : html`<p class="error problem" role="alert">
            ${problem.path === undefined ? null : html`<button type="button" class="link path" onClick=${() => select(problem.path as string)} title="Select it in the query">${problem.path}</button>: `}${problem.message}
          </p>`}
    </div>
    <button type="submit" disabled=${busy}>${cohort === undefined ? 'Create cohort' : 'Save changes'}</button>
  </form>`;
}
