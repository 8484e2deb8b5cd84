// The Node options `audience serve` is meant to run with, in one place. `npm start`, the `audience` executable's
// shebang, the Dockerfile and the README's systemd unit give them to node (they cannot import this file; a test
// checks that each names them), and the benchmarks start the server with them (bench/processes.ts).
//
// Why: a young generation of 32 MiB per semi-space instead of V8's 16 MiB default. The expected reason (not measured
// apart): an ingest group keeps its requests' objects alive for a few milliseconds, until its batch is written,
// which a smaller young generation's scavenges copy and promote. What was measured: `node dist/bench/ab.js` (5,000
// users, ingestion, 3 rounds, each variant right after a baseline) gave the server's CPU per request as 319 µs
// (319 / 250 / 319) with the default and 271 µs (298 / 233 / 271) with 32 MiB; 64 MiB gave 280, 128 MiB 310. Costs
// the new space's growth: two semi-spaces of 32 MiB instead of 16.

export const SERVE_NODE_OPTIONS: readonly string[] = ['--max-semi-space-size=32'];
