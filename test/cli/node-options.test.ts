// The Node options `serve` is meant to run with (cli/node-options.ts) are given by every way the repository starts
// it: `npm start`, the `audience` executable's shebang (source and build), the Dockerfile and the README's systemd
// unit; and the shebang line works as the kernel runs it (`/usr/bin/env -S node OPTIONS script ARGS`).

import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SERVE_NODE_OPTIONS } from '../../cli/node-options.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OPTIONS = SERVE_NODE_OPTIONS.join(' ');
const text = (path: string): Promise<string> => readFile(join(ROOT, path), 'utf8');

describe('node options of serve', () => {
  it('are named, and only once, by npm start, the shebangs, the Dockerfile and the README unit', async () => {
    expect(SERVE_NODE_OPTIONS.length).toBeGreaterThan(0);
    const start = (JSON.parse(await text('package.json')) as { scripts: { start: string } }).scripts.start;
    expect(start).toBe(`exec node ${OPTIONS} dist/cli/bin.js serve --data ./data`);
    for (const file of ['cli/bin.ts', 'dist/cli/bin.js']) expect((await text(file)).split('\n')[0]).toBe(`#!/usr/bin/env -S node ${OPTIONS}`);
    expect(await text('Dockerfile')).toContain(`ENTRYPOINT ["node", ${SERVE_NODE_OPTIONS.map((option) => JSON.stringify(option)).join(', ')}, "dist/cli/bin.js"]`);
    expect(await text('README.md')).toContain(`ExecStart=/usr/bin/node ${OPTIONS} /opt/audience/dist/cli/bin.js serve`);
  });

  it("the executable's shebang line starts node with them: the CLI answers --version", async () => {
    const line = (await text('dist/cli/bin.js')).split('\n')[0] as string;
    const [interpreter, ...args] = line.slice(2).split(' ');
    const { version } = JSON.parse(await text('package.json')) as { version: string };
    const child = spawn(interpreter as string, [...args, join(ROOT, 'dist/cli/bin.js'), '--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, out }).toEqual({ code: 0, out: `${version}\n` });
  });
});
