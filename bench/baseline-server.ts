// The same-run baseline: a bare uWebSockets.js server that reads every POST body, parses it as JSON and answers
// 200 {"ok":true}. Run as its own process by bench/run.ts; prints `listening on http://HOST:PORT`.
// Run: node dist/bench/baseline-server.js [--port 0]

import * as uWS from 'uWebSockets.js';
import { listenUntilStopped } from './listen.js';

const portArg = process.argv.indexOf('--port');
const port = portArg >= 0 ? Number(process.argv[portArg + 1]) : 0;
const host = '127.0.0.1';
const OK = '{"ok":true}';

const app = uWS.App();
app.post('/*', (res, req) => {
  // Read from req before anything async (uWS rule); then collect the body chunks.
  void req.getHeader('content-type');
  let aborted = false;
  let chunks: Buffer[] = [];
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, isLast) => {
    // uWS reuses the chunk's memory after this callback: copy it.
    chunks.push(Buffer.from(Buffer.from(chunk)));
    if (!isLast || aborted) return;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    chunks = [];
    let status = '200 OK';
    let reply = OK;
    try {
      JSON.parse(body.toString('utf8'));
    } catch {
      status = '400 Bad Request';
      reply = '{"ok":false}';
    }
    res.cork(() => {
      res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(reply);
    });
  });
});
listenUntilStopped(app, host, port);
