import { describe, expect, test } from 'vitest';
import { sandboxAvailable } from './available.js';
import { SandboxUnavailableError } from './errors.js';

describe('whether the agent sandbox works here', () => {
  test('bwrap is tried for real: this machine has a working one', async () => {
    expect(await sandboxAvailable()).toEqual({ ok: true });
  });

  test('a missing bwrap is reported, and the refusal names the package to install and the way out', async () => {
    const missing = await sandboxAvailable('/nonexistent/bwrap');
    expect(missing).toEqual({ ok: false, reason: 'bwrap (bubblewrap) is not installed' });
    const error = new SandboxUnavailableError(missing.ok ? '' : missing.reason);
    expect(error.code).toBe('sandbox_unavailable');
    expect(error.message).toContain('apt-get install bubblewrap');
    expect(error.message).toContain('--sandbox off');
  });

  test('a bwrap that cannot confine (here: a program that fails) is not taken for a working one', async () => {
    const broken = await sandboxAvailable('false');
    expect(broken.ok).toBe(false);
  });
});
