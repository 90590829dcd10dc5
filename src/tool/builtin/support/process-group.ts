import { readdirSync, readFileSync } from 'node:fs';
import { isErrnoError } from './fs-error.js';

/**
 * The state letter and process group of a process from /proc (Linux), or undefined when it is
 * gone or /proc is not available.
 */
function procStat(pid: number): { state: string; pgrp: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/**
 * True when the process is running. A zombie counts as gone: it has exited and only waits for its
 * parent to reap it, which for orphans is PID 1 — and some container inits reap only every second
 * or two, which would otherwise look like a process that survived its kill.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (!(isErrnoError(error) && error.code === 'EPERM')) return false;
  }
  const stat = procStat(pid);
  return stat === undefined ? process.platform !== 'linux' : stat.state !== 'Z';
}

/** True while any process of the group led by `pgid` is running (zombies excepted, see above). */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    // EPERM means it exists but belongs to someone else: still alive.
    if (!(isErrnoError(error) && error.code === 'EPERM')) return false;
  }
  if (process.platform !== 'linux') return true;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  return entries.some((name) => {
    if (!/^\d+$/.test(name)) return false;
    const stat = procStat(Number(name));
    return stat !== undefined && stat.pgrp === pgid && stat.state !== 'Z';
  });
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what we want.
  }
}

/**
 * Ends a whole process group: SIGTERM first so programs may clean up, SIGKILL after `graceMs` for
 * those that ignore it. Killing the group, not the shell, is what stops `sleep 30 &` and pipelines
 * that the shell started. Resolves once the group is gone or the SIGKILL was sent.
 */
export function killProcessGroup(pgid: number, graceMs: number): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  if (!processGroupAlive(pgid)) return Promise.resolve();
  return new Promise((resolve) => {
    const poll = Math.min(25, Math.max(1, graceMs));
    const started = Date.now();
    const timer = setInterval(() => {
      if (!processGroupAlive(pgid)) {
        clearInterval(timer);
        resolve();
      } else if (Date.now() - started >= graceMs) {
        clearInterval(timer);
        signalGroup(pgid, 'SIGKILL');
        resolve();
      }
    }, poll);
  });
}
