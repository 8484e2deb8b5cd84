// The dashboard's shell: sign-in (paste a key; kept for this browser tab only), the navigation the key's access
// allows (D6–D8: a public key reads users' events only), and a hash router over the pages.

import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { Api, ApiError, probeAccess, type Access } from './api.js';
import { Live } from './live.js';
import { CohortsPage } from './pages/cohorts.js';
import { CohortPage } from './pages/cohort.js';
import { ReactionsPage } from './pages/reactions.js';
import { UsersPage } from './pages/users.js';
import { TaxonomyPage } from './pages/taxonomy.js';
import { KeysPage } from './pages/keys.js';

export interface Session {
  readonly api: Api;
  readonly access: Access;
  /** The live stream; absent for a public key (the stream needs a private one). */
  readonly live: Live | undefined;
}

const KEY_STORE = 'audience.key';

function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return hash;
}

function SignIn({ onSession }: { onSession: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSession(await openSession(key.trim()));
    } catch (e) {
      setError(e instanceof ApiError ? e.describe() : String(e));
    } finally {
      setBusy(false);
    }
  };
  return html`<main id="main" class="signin">
    <h1>audience</h1>
    <form onSubmit=${submit} aria-label="Sign in">
      <label for="key">API key</label>
      <input id="key" name="key" autocomplete="off" spellcheck="false" placeholder="a private key for everything, a public key for events" value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)} required />
      <button type="submit" disabled=${busy}>Sign in</button>
      ${error === undefined ? null : html`<p class="error" role="alert">${error}</p>`}
    </form>
    <p class="hint">The key stays in this tab (session storage) and goes only to this server.</p>
  </main>`;
}

async function openSession(key: string): Promise<Session> {
  const api = new Api(key);
  const access = await probeAccess(api);
  sessionStorage.setItem(KEY_STORE, key);
  return { api, access, live: access.private ? new Live(key) : undefined };
}

interface Route {
  readonly path: string;
  readonly label: string;
  readonly needs: 'public' | 'private' | 'admin';
}

const NAV: readonly Route[] = [
  { path: 'cohorts', label: 'Cohorts', needs: 'private' },
  { path: 'reactions', label: 'Reactions', needs: 'private' },
  { path: 'users', label: 'Users', needs: 'public' },
  { path: 'taxonomy', label: 'Taxonomy', needs: 'private' },
  { path: 'keys', label: 'Keys & workspaces', needs: 'admin' },
];

const allowed = (access: Access, route: Route): boolean => route.needs === 'public' || (route.needs === 'private' ? access.private : access.admin);

function Page({ session, parts }: { session: Session; parts: string[] }) {
  const [first, second] = parts;
  switch (first) {
    case 'cohorts':
      return second === undefined ? html`<${CohortsPage} session=${session} />` : html`<${CohortPage} session=${session} id=${second} />`;
    case 'reactions':
      return html`<${ReactionsPage} session=${session} id=${second} />`;
    case 'users':
      return html`<${UsersPage} session=${session} query=${second === undefined ? undefined : decodeURIComponent(second)} />`;
    case 'taxonomy':
      return html`<${TaxonomyPage} session=${session} importId=${second} />`;
    case 'keys':
      return html`<${KeysPage} session=${session} />`;
    default:
      return html`<p>No such page.</p>`;
  }
}

function App() {
  const [session, setSession] = useState<Session | undefined>();
  const [restoring, setRestoring] = useState(sessionStorage.getItem(KEY_STORE) !== null);
  const hash = useHash();
  useEffect(() => {
    const saved = sessionStorage.getItem(KEY_STORE);
    if (saved === null) return;
    openSession(saved)
      .then(setSession)
      .catch(() => sessionStorage.removeItem(KEY_STORE))
      .finally(() => setRestoring(false));
  }, []);
  if (restoring) return html`<main id="main"><p>Signing in…</p></main>`;
  if (session === undefined) return html`<${SignIn} onSession=${setSession} />`;
  const routes = NAV.filter((route) => allowed(session.access, route));
  const parts = hash.replace(/^#\/?/, '').split('/').filter((p) => p !== '');
  if (parts.length === 0 || !routes.some((r) => r.path === parts[0])) parts.splice(0, parts.length, (routes[0] as Route).path);
  const signOut = () => {
    sessionStorage.removeItem(KEY_STORE);
    session.live?.close();
    setSession(undefined);
  };
  return html`<a class="skip" href="#main">Skip to content</a>
    <header>
      <strong class="brand">audience</strong>
      <nav aria-label="Sections">
        ${routes.map((r) => html`<a href=${`#/${r.path}`} aria-current=${parts[0] === r.path ? 'page' : undefined}>${r.label}</a>`)}
      </nav>
      <span class="who">${session.access.admin ? 'admin key' : session.access.private ? 'private key' : 'public key'}</span>
      <button class="link" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main" tabindex="-1"><${Page} session=${session} parts=${parts} /></main>`;
}

render(html`<${App} />`, document.getElementById('app') as HTMLElement);
