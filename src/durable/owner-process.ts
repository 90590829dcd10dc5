import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { RunOwnerRecord } from '../store/index.js';

// Which process holds a lease, and whether it still lives: on the owner's own host a dead owner is
// known at once (its pid is gone, or now names another process); elsewhere only its lease says.

export type OwnerProcess = Omit<RunOwnerRecord, 'owner'>;

/** `alive`: the owner's process runs; `dead`: it certainly does not; `unknown`: judge by the lease. */
export type OwnerLiveness = 'alive' | 'dead' | 'unknown';

function readTrimmed(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * A process's state and start time after boot (in clock ticks): fields 3 and 22 of /proc/PID/stat.
 * The second field (the command name, in parentheses) may hold spaces and parentheses itself, so
 * fields are counted from the last `)`: the one after it is field 3.
 */
function readStat(pid: number, procRoot: string): { state: string; startTime: string | null } | null {
  const stat = readTrimmed(`${procRoot}/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 1).trim().split(/\s+/);
  const start = fields[22 - 3];
  return { state: fields[0] ?? '', startTime: start !== undefined && /^\d+$/.test(start) ? start : null };
}

/** A process's start time after boot, in clock ticks (/proc/PID/stat field 22); null where unknown. */
export function processStartTime(pid: number, procRoot = '/proc'): string | null {
  return readStat(pid, procRoot)?.startTime ?? null;
}

/** This host's boot id (Linux); null where there is none. */
export function bootId(procRoot = '/proc'): string | null {
  return readTrimmed(`${procRoot}/sys/kernel/random/boot_id`);
}

/**
 * Where a pid means something: the host name, plus the pid namespace where there is one. Two
 * containers may share a host name (host networking) while each has its own pids; a pid of one
 * says nothing about the other, so they must not judge each other's owners (the lease does).
 */
export function pidScope(name = hostname(), procRoot = '/proc'): string {
  try {
    const ns = readlinkSync(`${procRoot}/self/ns/pid`);
    const inode = /^pid:\[(\d+)\]$/.exec(ns)?.[1];
    return inode ? `${name} (pid ns ${inode})` : name;
  } catch {
    return name;
  }
}

/** This process as a lease owner records it. */
export function thisProcess(): OwnerProcess {
  return { host: pidScope(), pid: process.pid, bootId: bootId(), startTime: processStartTime(process.pid) };
}

function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process behind a lease still runs, seen from `here`. Only the owner's own host can
 * tell: another host's owner is `unknown` (its lease decides). On the same host, a pid that no
 * longer exists, or is a zombie, is dead; with a boot id and a start time (Linux) a host rebooted
 * since, or a pid now naming a process started at another time (the pid was reused), is dead too.
 * Without them (not Linux), a pid that exists may be a stranger: `unknown`.
 */
export function ownerLiveness(owner: OwnerProcess, here: OwnerProcess = thisProcess()): OwnerLiveness {
  if (owner.host !== here.host || !Number.isInteger(owner.pid) || owner.pid <= 0) return 'unknown';
  if (owner.bootId !== null && here.bootId !== null && owner.bootId !== here.bootId) return 'dead';
  if (owner.pid === here.pid && owner.startTime === here.startTime) return 'alive';
  if (!pidExists(owner.pid)) return 'dead';
  const stat = readStat(owner.pid, '/proc');
  // A zombie (killed, not yet reaped by its parent) answers signal 0 but runs no more.
  if (stat && (stat.state === 'Z' || stat.state === 'X')) return 'dead';
  if (owner.startTime === null || owner.bootId === null) return 'unknown';
  if (stat?.startTime == null) return pidExists(owner.pid) ? 'unknown' : 'dead';
  return stat.startTime === owner.startTime ? 'alive' : 'dead';
}
