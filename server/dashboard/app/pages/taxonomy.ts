// Taxonomy and imports (D25–D27, D45): the imports the key sees; an import's segments page by page with code, CPM,
// categories and how many users each holds.

import { useState } from 'preact/hooks';
import { html } from '../html.js';
import type { Session } from '../main.js';
import { ErrorLine, count, useLoad, when } from '../ui.js';

interface Import {
  id: string;
  name: string;
  code: string;
  relation: '2nd' | '3rd';
  kind: 'segments' | 'connections';
  identifiers: string[];
  created_at: string;
}

interface Segment {
  id: string;
  code: string;
  name: string;
  description: string | null;
  cpm: number | null;
  categories: string[];
  member_count: number;
  updated_at: string;
}

function Segments({ session, imported }: { session: Session; imported: Import }) {
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const token = tokens[tokens.length - 1];
  const page = useLoad(
    () => session.api.get<{ elements: Segment[]; pagination: { next_token?: string; total_count: number } }>(`/audience-api/v1/imports/${imported.id}/segments?page_size=100${token === undefined ? '' : `&pagination_token=${encodeURIComponent(token)}`}`),
    [imported.id, token],
  );
  const next = page.data?.pagination.next_token;
  return html`<section class="card" aria-labelledby="segments-title">
    <div class="bar">
      <h2 id="segments-title">Segments of ${imported.name}</h2>
      <span>${count(page.data?.pagination.total_count)} in all</span>
      <button type="button" disabled=${tokens.length === 1} onClick=${() => setTokens(tokens.slice(0, -1))}>Previous page</button>
      <button type="button" disabled=${next === undefined} onClick=${() => setTokens([...tokens, next])}>Next page</button>
    </div>
    <${ErrorLine} error=${page.error} />
    <div class="scroll"><table>
      <thead><tr><th>Code</th><th>Name</th><th class="num">CPM</th><th>Categories</th><th class="num">Members</th><th>Updated</th></tr></thead>
      <tbody>
        ${(page.data?.elements ?? []).map(
          (s) => html`<tr key=${s.id} data-segment=${s.code}><td><code>${s.code}</code></td><td>${s.name}${s.description === null ? null : html`<br /><small>${s.description}</small>`}</td>
            <td class="num">${s.cpm ?? '–'}</td><td>${s.categories.join(', ') || '–'}</td><td class="num members">${count(s.member_count)}</td><td>${when(s.updated_at)}</td></tr>`,
        )}
      </tbody>
    </table></div>
  </section>`;
}

export function TaxonomyPage({ session, importId }: { session: Session; importId?: string }) {
  const imports = useLoad(() => session.api.get<Import[]>('/audience-api/v1/imports'), []);
  const selected = imports.data?.find((i) => i.id === importId);
  return html`<section aria-labelledby="taxonomy-title">
    <h1 id="taxonomy-title">Taxonomy</h1>
    <${ErrorLine} error=${imports.error} />
    <div class="scroll"><table>
      <thead><tr><th>Import</th><th>Code (provider)</th><th>Relation</th><th>Kind</th><th>Matched by</th><th>Created</th></tr></thead>
      <tbody>
        ${(imports.data ?? []).map(
          (i) => html`<tr key=${i.id}><td>${i.kind === 'segments' ? html`<a href=${`#/taxonomy/${i.id}`}>${i.name}</a>` : i.name}</td><td><code>${i.code}</code></td>
            <td>${i.relation} party</td><td>${i.kind}</td><td>${i.identifiers.join(', ') || '–'}</td><td>${when(i.created_at)}</td></tr>`,
        )}
      </tbody>
    </table></div>
    ${imports.data?.length === 0 ? html`<p>No imports yet (<code>audience imports create</code> or the API makes them).</p>` : null}
    ${selected === undefined ? null : html`<${Segments} session=${session} imported=${selected} />`}
  </section>`;
}
