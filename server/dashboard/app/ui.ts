// Small shared pieces of the pages: loading data with its error, an error line, times and numbers for people.

import { useCallback, useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { ApiError } from './api.js';

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: string | undefined;
  reload(): void;
  set(data: T): void;
}

/** Runs `load` now and whenever `deps` change; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(undefined);
      },
      (e: unknown) => current && setError(describe(e)),
    );
    return () => {
      current = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, reload, set: setData };
}

export function describe(error: unknown): string {
  return error instanceof ApiError ? error.describe() : error instanceof Error ? error.message : String(error);
}

export function ErrorLine({ error }: { error: string | undefined }) {
  return error === undefined ? null : html`<p class="error" role="alert">${error}</p>`;
}

export function when(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '–';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export const count = (n: number | undefined): string => (n === undefined ? '–' : n.toLocaleString());

/** A button that runs an async action, disabled meanwhile, reporting a failure through `onError`. */
export function ActionButton({ label, run, onError, kind, disabled }: { label: string; run: () => Promise<unknown>; onError: (e: string | undefined) => void; kind?: string; disabled?: boolean }) {
  const [busy, setBusy] = useState(false);
  const click = async () => {
    setBusy(true);
    onError(undefined);
    try {
      await run();
    } catch (e) {
      onError(describe(e));
    } finally {
      setBusy(false);
    }
  };
  return html`<button type="button" class=${kind ?? ''} disabled=${busy || disabled === true} onClick=${click}>${label}</button>`;
}
