// Keys and workspaces (operations.md admin API; D5, D8): the workspace tree, a new workspace, the keys (never their
// values), a new key (its value shown once), revoking one. Needs a key with descendants access.

import { useState } from 'preact/hooks';
import { html } from '../html.js';
import type { Session } from '../main.js';
import { ActionButton, ErrorLine, describe, useLoad, when } from '../ui.js';

interface Workspace {
  id: string;
  name: string;
  parent_id: string | null;
}

interface Key {
  id: string;
  type: 'public' | 'private';
  name?: string;
  workspace_id: string;
  access: 'workspace' | 'descendants';
  created_at: string;
}

function Tree({ workspaces, parent }: { workspaces: Workspace[]; parent: string | null }) {
  const children = workspaces.filter((w) => w.parent_id === parent || (parent === null && w.parent_id !== null && !workspaces.some((p) => p.id === w.parent_id)));
  if (children.length === 0) return null;
  return html`<ul class="tree">${children.map((w) => html`<li><span>${w.name}</span> <small><code>${w.id}</code></small><${Tree} workspaces=${workspaces} parent=${w.id} /></li>`)}</ul>`;
}

export function KeysPage({ session }: { session: Session }) {
  const workspaces = useLoad(() => session.api.get<Workspace[]>('/admin/v1/workspaces'), []);
  const keys = useLoad(() => session.api.get<Key[]>('/admin/v1/keys'), []);
  const [error, setError] = useState<string | undefined>();
  const [created, setCreated] = useState<string | undefined>();
  const [keyForm, setKeyForm] = useState({ workspace_id: '', type: 'public', name: '', access: 'workspace' });
  const [wsForm, setWsForm] = useState({ name: '', parent_id: '' });
  const nameOf = (id: string) => workspaces.data?.find((w) => w.id === id)?.name ?? id;
  const options = (workspaces.data ?? []).map((w) => html`<option value=${w.id}>${w.name}</option>`);
  const createKey = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      const answer = await session.api.send<Key & { key: string }>('POST', '/admin/v1/keys', { ...keyForm, ...(keyForm.name === '' ? { name: undefined } : {}) });
      setCreated(answer.key);
      keys.reload();
    } catch (e) {
      setError(describe(e));
    }
  };
  const createWorkspace = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    try {
      await session.api.send('POST', '/admin/v1/workspaces', wsForm);
      setWsForm({ name: '', parent_id: '' });
      workspaces.reload();
    } catch (e) {
      setError(describe(e));
    }
  };
  const input = (e: Event) => (e.target as HTMLInputElement).value;
  return html`<section aria-labelledby="keys-title">
    <h1 id="keys-title">Keys and workspaces</h1>
    <${ErrorLine} error=${error ?? keys.error ?? workspaces.error} />
    <div class="two">
      <section class="card"><h2>Workspaces</h2><${Tree} workspaces=${workspaces.data ?? []} parent=${null} />
        <form class="form" onSubmit=${createWorkspace} aria-label="New workspace">
          <label for="ws-name">New workspace</label><input id="ws-name" value=${wsForm.name} required onInput=${(e: Event) => setWsForm({ ...wsForm, name: input(e) })} />
          <label for="ws-parent">Parent</label>
          <select id="ws-parent" value=${wsForm.parent_id} required onChange=${(e: Event) => setWsForm({ ...wsForm, parent_id: input(e) })}><option value="">choose</option>${options}</select>
          <button type="submit">Create workspace</button>
        </form>
      </section>
      <section class="card"><h2>New key</h2>
        <form class="form" onSubmit=${createKey} aria-label="New key">
          <label for="key-workspace">Workspace</label>
          <select id="key-workspace" value=${keyForm.workspace_id} required onChange=${(e: Event) => setKeyForm({ ...keyForm, workspace_id: input(e) })}><option value="">choose</option>${options}</select>
          <label for="key-type">Type</label>
          <select id="key-type" value=${keyForm.type} onChange=${(e: Event) => setKeyForm({ ...keyForm, type: input(e) })}><option value="public">public (sites, apps)</option><option value="private">private (servers)</option></select>
          <label for="key-access">Access</label>
          <select id="key-access" value=${keyForm.access} onChange=${(e: Event) => setKeyForm({ ...keyForm, access: input(e) })}><option value="workspace">this workspace</option><option value="descendants">and the workspaces below</option></select>
          <label for="key-name">Name</label><input id="key-name" value=${keyForm.name} onInput=${(e: Event) => setKeyForm({ ...keyForm, name: input(e) })} />
          <button type="submit">Create key</button>
        </form>
        ${created === undefined ? null : html`<div class="secret" role="status"><p>The new key (shown once; only its hash is kept):</p><code class="once">${created}</code></div>`}
      </section>
    </div>
    <h2>Keys</h2>
    <div class="scroll"><table>
      <thead><tr><th>Name</th><th>Type</th><th>Access</th><th>Workspace</th><th>Created</th><th></th></tr></thead>
      <tbody>
        ${(keys.data ?? []).map(
          (k) => html`<tr key=${k.id} data-key=${k.id}><td>${k.name ?? '–'}</td><td>${k.type}</td><td>${k.access}</td><td>${nameOf(k.workspace_id)}</td><td>${when(k.created_at)}</td>
            <td><${ActionButton} label="Revoke" kind="danger" run=${async () => confirm(`Revoke the key "${k.name ?? k.id}"? It stops working at once.`) && (await session.api.send('DELETE', `/admin/v1/keys/${k.id}`), keys.reload())} onError=${setError} /></td></tr>`,
        )}
      </tbody>
    </table></div>
  </section>`;
}
