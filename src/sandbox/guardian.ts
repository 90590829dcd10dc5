import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The guardian's program (POSIX sh, so it costs a shell, not a second Node): it reads `+PGID` and
 * `-PGID` lines from Sage on stdin and, when stdin ends — Sage exited or was killed, SIGKILL
 * included, since the kernel closes the pipe either way — SIGKILLs every group still registered.
 * It ignores the terminal's INT and HUP: Ctrl+C on Sage must not end the guardian before Sage.
 */
const GUARDIAN_SCRIPT = `
trap '' INT HUP
groups=' '
while IFS= read -r line; do
  n=\${line#?}
  case "$n" in ''|*[!0-9]*) continue ;; esac
  [ "$n" -gt 1 ] || continue
  case "$line" in
    +*) groups="$groups$n " ;;
    -*) case "$groups" in *" $n "*) groups="\${groups%% $n *} \${groups#* $n }" ;; esac ;;
  esac
done
for n in $groups; do kill -s KILL -- "-$n" 2>/dev/null; done
`;

/**
 * Process groups that must not outlive this Sage process: a Bash tool's command, an agent's tree
 * started unconfined, a terminal an ACP agent asked for. Node cannot ask the kernel to signal a child
 * when its parent dies (no prctl), so one small guardian process per Sage process, started at the
 * first registration and detached into its own process group, holds a pipe from Sage and kills every
 * registered group when that pipe closes. A group is released once it ended by itself, so a
 * background server a finished command left on purpose (`nohup … &`) keeps running.
 */
class ProcessGuardian {
  private child: ChildProcess | undefined;
  private readonly groups = new Set<number>();

  /** Kills `pgid` with this process; returns the release to call once the group's work is over. */
  guard(pgid: number): () => void {
    if (!Number.isInteger(pgid) || pgid <= 1) return () => {};
    this.groups.add(pgid);
    this.send(`+${pgid}\n`);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.groups.delete(pgid);
      this.send(`-${pgid}\n`);
    };
  }

  /** The guardian's pid, for tests that check it is there. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  private send(line: string): void {
    const child = this.child ?? this.start();
    if (child?.stdin?.writable) child.stdin.write(line);
  }

  private start(): ChildProcess | undefined {
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', GUARDIAN_SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    } catch {
      return undefined;
    }
    this.child = child;
    child.on('error', () => {
      if (this.child === child) this.child = undefined;
    });
    child.stdin?.on('error', () => {});
    child.on('exit', () => {
      // Someone ended the guardian: the next registration starts another, told every live group.
      if (this.child !== child) return;
      this.child = undefined;
    });
    // Neither the guardian nor its pipe keeps Sage's event loop alive.
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    // A guardian started again after the first one died learns the groups still running.
    for (const pgid of this.groups) child.stdin?.write(`+${pgid}\n`);
    return child;
  }
}

const guardian = new ProcessGuardian();

/**
 * Registers a process group (a child spawned with `detached: true` leads its own group: pgid = pid)
 * to be SIGKILLed when this Sage process dies, however it dies. Call the returned release once the
 * group ended or was stopped by Sage itself.
 */
export function killWithSage(pgid: number | undefined): () => void {
  return pgid === undefined ? () => {} : guardian.guard(pgid);
}

/** The guardian's pid once one was started (tests). */
export function guardianPid(): number | undefined {
  return guardian.pid;
}
