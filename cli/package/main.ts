// The single executable's script (`npm run package`, build.ts bundles it with everything it imports): writes out
// the native addons and the worker file, points the bundled uWebSockets.js, classic-level and piscina at them, then
// runs the CLI exactly as dist/cli/bin.js does.

import './setup.js';
import { runCli } from '../main.js';
import { processIo } from '../io.js';

runCli(process.argv.slice(2), processIo()).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`audience: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
