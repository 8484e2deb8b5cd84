// Binding a uWS app to host:port. uWS only reports failure as `false`, so on failure a throwaway node:net bind
// finds out why, for a message a person can act on ("port 8080 is already in use on 127.0.0.1").

import { createServer } from 'node:net';
import * as uWS from './uws.js';

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT: never share a port with another listener (no SO_REUSEPORT). */
const EXCLUSIVE_PORT = 1;

type ListenWithOptions = (
  host: string,
  port: number,
  options: number,
  cb: (listenSocket: uWS.us_listen_socket | false) => void,
) => void;

export function listenApp(app: uWS.TemplatedApp, host: string, port: number): Promise<uWS.us_listen_socket> {
  return new Promise((resolve, reject) => {
    // The native listen takes (host, port, options, cb); the typings lack that overload.
    (app.listen as unknown as ListenWithOptions).call(app, host, port, EXCLUSIVE_PORT, (listenSocket) => {
      if (listenSocket !== false) resolve(listenSocket);
      else describeListenFailure(host, port).then((message) => reject(new Error(message)), reject);
    });
  });
}

export async function describeListenFailure(host: string, port: number): Promise<string> {
  const code = await new Promise<string | undefined>((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'UNKNOWN'));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} is already in use on ${host}`;
    case 'EACCES':
      return `permission denied to listen on ${host}:${port} (ports below 1024 need privileges)`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${host}:${port}: ${host} is not an address of this machine`;
    case undefined:
      return `cannot listen on ${host}:${port}`;
    default:
      return `cannot listen on ${host}:${port} (${code})`;
  }
}

/** The base URL of a server: IPv6 hosts in brackets. */
export function baseUrl(tls: boolean, host: string, port: number): string {
  const shownHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `${tls ? 'https' : 'http'}://${shownHost}:${port}`;
}
