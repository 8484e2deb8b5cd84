// The live stream (D38) for the pages: one WebSocket per signed-in session (`?k=`: a browser cannot set headers on
// a WebSocket), reopened after a drop, each frame handed to whoever listens. Pages resync from the API on reopen.

export interface Transition {
  readonly cursor: string;
  readonly kind: 'entered' | 'exited';
  readonly cohort: { readonly id: string; readonly code: number };
  readonly user_id: string;
  readonly time: string;
}

type Listener = (t: Transition) => void;

export class Live {
  private socket: WebSocket | undefined;
  private readonly listeners = new Set<Listener>();
  private readonly reopenListeners = new Set<() => void>();
  private closed = false;
  private retry = 500;
  connected = false;

  constructor(private readonly key: string) {
    this.open();
  }

  private open(): void {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/reactions-api/v1/stream?k=${encodeURIComponent(this.key)}`);
    this.socket = socket;
    socket.onopen = () => {
      this.connected = true;
      this.retry = 500;
      for (const listener of this.reopenListeners) listener();
    };
    socket.onmessage = (message) => {
      const transition = JSON.parse(String(message.data)) as Transition;
      for (const listener of this.listeners) listener(transition);
    };
    socket.onclose = () => {
      this.connected = false;
      if (this.closed) return;
      setTimeout(() => this.open(), this.retry);
      this.retry = Math.min(this.retry * 2, 15_000);
    };
  }

  /** Every transition while subscribed; returns the unsubscribe. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called each time the socket (re)opens: what was missed meanwhile must be read again. */
  onOpen(listener: () => void): () => void {
    this.reopenListeners.add(listener);
    return () => this.reopenListeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    this.socket?.close();
  }
}
