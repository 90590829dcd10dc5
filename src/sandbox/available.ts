import { execFile } from 'node:child_process';

/** The smallest confinement the agent sandbox uses, tried for real: a `which bwrap` says nothing about user namespaces. */
const PROBE = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--unshare-pid', '--die-with-parent', '--new-session', '--', 'true'];

const probed = new Map<string, Promise<{ ok: true } | { ok: false; reason: string }>>();

/**
 * Whether bubblewrap works on this machine, tried once per process (cached): it may be missing, or
 * present but refused by the kernel (user namespaces off, a container without the capability).
 */
export function sandboxAvailable(bwrap = 'bwrap'): Promise<{ ok: true } | { ok: false; reason: string }> {
  const known = probed.get(bwrap);
  if (known) return known;
  const probe = new Promise<{ ok: true } | { ok: false; reason: string }>((resolve) => {
    if (process.platform !== 'linux') {
      resolve({ ok: false, reason: `the agent sandbox uses Linux's bubblewrap, and this is ${process.platform}` });
      return;
    }
    execFile(bwrap, PROBE, { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (!error) return resolve({ ok: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return resolve({ ok: false, reason: 'bwrap (bubblewrap) is not installed' });
      resolve({ ok: false, reason: `bwrap is installed but cannot confine a process here (${String(stderr).trim().split('\n').at(-1) || error.message})` });
    });
  });
  probed.set(bwrap, probe);
  return probe;
}
