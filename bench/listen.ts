// The bench's own uWebSockets.js servers (baseline-server.ts, floor-server.ts): a 404 for every other route, listen,
// print `listening on http://HOST:PORT` (what bench/processes.ts waits for), and stop on SIGTERM / SIGINT.

import * as uWS from 'uWebSockets.js';

/** Listens on `host:port` (0: any free port) until a SIGTERM or SIGINT, then closes and runs `close` before exiting. */
export function listenUntilStopped(app: uWS.TemplatedApp, host: string, port: number, close: () => Promise<void> | void = () => undefined): void {
  app.any('/*', (res) => {
    res.cork(() => res.writeStatus('404 Not Found').end());
  });
  app.listen(host, port, (socket) => {
    if (socket === false) {
      process.stderr.write(`cannot listen on ${host}:${port}\n`);
      process.exit(1);
    }
    process.stdout.write(`listening on http://${host}:${uWS.us_socket_local_port(socket)}\n`);
    const stop = (): void => {
      uWS.us_listen_socket_close(socket);
      void Promise.resolve(close()).then(() => process.exit(0));
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
