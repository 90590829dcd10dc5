import { homedir } from 'node:os';
import { styleText } from 'node:util';
import { isFolderTrusted, trustCommandFor, trustFolder } from '../permission/index.js';
import type { RunFlags } from './run-flags.js';
import { ignoredUntilTrusted } from './untrusted-folder.js';

/** Folders this process already asked about: a person is asked once, not again when the gate is built. */
const answered = new Map<string, boolean>();

const home = () => process.env.SAGE_HOME || homedir();

/**
 * A folder whose own files (settings with allow rules, hooks, mode…; MCP servers; agents; skills)
 * wait for trust: at a terminal the person is asked once (yes is remembered as `sage trust` does;
 * no goes on without them and says what is ignored). Without one (no TTY, CI, --non-interactive,
 * --batch) nothing is asked: one line on stderr says what is ignored and the command that trusts.
 */
export async function offerFolderTrust(flags: RunFlags, cwd: string): Promise<void> {
  if (!canAsk(flags)) return reportUntrustedFolder(cwd);
  if (isFolderTrusted(home(), cwd) || ignoredUntilTrusted(cwd).length === 0) return;
  await askTrust(cwd, {});
}

/** The one line a run with nobody to ask prints in a folder whose own files wait for trust. */
export function reportUntrustedFolder(cwd: string): void {
  if (isFolderTrusted(home(), cwd)) return;
  const ignored = ignoredUntilTrusted(cwd);
  if (ignored.length === 0) return;
  process.stderr.write(`${styleText('yellow', 'untrusted folder:')} ${cwd}: ignoring its ${ignored.join(', ')} `
    + `(deny and ask rules apply). Trust it with: ${trustCommandFor(cwd)}\n`);
}

export function canAsk(flags: RunFlags): boolean {
  // The flags first: process.stdin is built on first touch, which a run without a person never needs.
  return !flags.batch && !flags.nonInteractive && !process.env.CI && Boolean(process.stdin.isTTY);
}

/**
 * The trust question, once per folder and process (the run's gate may ask again: it gets the first
 * answer). A yes is recorded in ~/.sage/trusted-folders.json by the folder's real path.
 */
export async function askTrust(cwd: string, _files: Record<string, string | undefined>): Promise<boolean> {
  const earlier = answered.get(cwd);
  if (earlier !== undefined) return earlier;
  const ignored = ignoredUntilTrusted(cwd);
  const what = ignored.length ? ignored.join(', ') : 'allow rules, hooks or MCP servers';
  const why = `Its own files turn on ${what}, which apply (or start) only in folders you trust. `
    + 'Deny and ask rules apply either way.';
  process.stderr.write(`${styleText(['bold', 'yellow'], '◆ Do you trust this folder?')}\n  ${cwd}\n  ${styleText('dim', why)}\n`);
  const { select } = await import('@inquirer/prompts');
  let yes: boolean;
  try {
    const choices = [
      { name: 'Yes, trust it (remembered, as sage trust does)', value: true },
      { name: 'No, go on without them', value: false },
    ];
    yes = await select({ message: 'Trust this folder?', choices }, { output: process.stderr });
  } catch {
    yes = false;
  }
  answered.set(cwd, yes);
  if (yes) {
    trustFolder(home(), cwd);
    const revoke = trustCommandFor(cwd, { revoke: true });
    process.stderr.write(`${styleText('dim', `Trusted ${cwd}. Take it back with: ${revoke}`)}\n`);
  } else {
    const later = `Not trusted: ignoring its ${what}. Trust it later with: ${trustCommandFor(cwd)}`;
    process.stderr.write(`${styleText('dim', later)}\n`);
  }
  return yes;
}
