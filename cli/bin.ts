#!/usr/bin/env -S node --max-semi-space-size=32
// The `audience` executable: runs the CLI against the real process and exits with its code.

import { runCli } from './main.js';
import { processIo } from './io.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
