// Waiting for a condition in tests, never for a guessed time: vitest's expect.poll re-checks `check` until it holds
// or `timeoutMs` passes (then the test fails naming what it waited for).

import { expect } from 'vitest';

export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  await expect.poll(check, { timeout: timeoutMs, interval: 5, message: `timed out waiting for ${what}` }).toBe(true);
}
