import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { DeniedPath } from '../permission/types.js';
import { sandboxAvailable } from './available.js';
import { SandboxUnavailableError } from './errors.js';
import { masksFor, type Mask } from './masks.js';

/**
 * Inside a run's folders: what configures later runs, Sage itself or the person's own git stays
 * read-only to the agent. The whole `.git`, not its config and hooks alone: a `commondir` written
 * there moves where git reads its config from, and a mount point cannot be renamed away and
 * replaced by a copy. The agent's own git commits fail inside the sandbox; Sage's gated Bash is not
 * confined.
 */
const READ_ONLY_IN_FOLDERS = ['.git', '.sage', '.claude', '.mcp.json', '.gemini', '.qwen', '.codex'];

export interface ConfineOptions {
  /** The agent's program and arguments. */
  command: readonly string[];
  /** The run's working directory (the agent starts there). */
  cwd: string;
  /** The run's folders besides its cwd: writable too. */
  additionalDirectories?: readonly string[];
  /** The agent's environment (its PATH finds the program; its HOME is hidden). */
  env: Readonly<Record<string, string>>;
  /** The agent's own state under the home folder (`.gemini`, `.claude.json`), kept readable and writable. */
  stateInHome?: readonly string[];
  /** The run's Read deny rules: the paths they name are masked. */
  denied?: readonly DeniedPath[];
  /** Paths inside the run's folders the agent must not see at all (an empty folder or file over each that exists). */
  hide?: readonly string[];
  /** Folders kept readable (not writable) over a hidden home: the files Sage writes for the agent to read at start. */
  readOnly?: readonly string[];
  /** The home folders to hide; default the agent's HOME and this process's home. */
  homes?: readonly string[];
  /**
   * Read-only over the agent's own state (its config inside a writable state folder): each path
   * shows `source`, or an empty file or folder; a path that does not exist yet is made as the
   * mount point, so the agent cannot create it either.
   */
  overlays?: readonly Overlay[];
}

/** A path inside the sandbox that shows another file, or nothing, and cannot be changed. */
export interface Overlay {
  path: string;
  /** The file or folder shown there; without it, an empty one. */
  source?: string;
  /** Without a source: an empty folder rather than an empty file. */
  folder?: boolean;
}

export interface Confinement {
  /** `bwrap …options… -- program args`: spawn this instead of the agent's command. */
  command: string[];
  env: Record<string, string>;
  /** What the sandbox hides because a Read deny rule names it. */
  masked: Mask[];
  /** Rules whose paths could not all be found (a search cut short): what they name may still be visible. */
  incomplete: string[];
}

/**
 * The agent's command inside a bubblewrap sandbox: the file system read-only, except the run's
 * folders, the agent's own state under home, and a private /tmp; the home folder hidden but for
 * that state and the agent's own program (kept readable wherever it is installed, a temp or home
 * folder included); the paths the run's Read deny rules name masked (an empty file or folder over
 * them); its own PID namespace; killed with Sage (`--die-with-parent`). The network is left as it
 * is: the agent needs its model's API. Throws SandboxUnavailableError when bubblewrap does not work.
 */
export async function confine(options: ConfineOptions): Promise<Confinement> {
  const available = await sandboxAvailable();
  if (!available.ok) throw new SandboxUnavailableError(available.reason);
  const env: Record<string, string> = { ...options.env, TMPDIR: '/tmp' };
  delete env.TMP;
  delete env.TEMP;
  const folders = [options.cwd, ...(options.additionalDirectories ?? [])].map((f) => realOr(resolve(f)));
  const homes = unique((options.homes ?? [options.env.HOME ?? homedir(), homedir()]).filter((h) => h && isAbsolute(h) && h !== '/').map((h) => realOr(h)));
  const state: string[] = [];
  for (const home of homes.slice(0, 1)) {
    for (const entry of options.stateInHome ?? []) {
      const path = join(home, entry);
      // A state folder the agent has not made yet is made now: made inside, it would vanish with the sandbox.
      if (!existsSync(path) && !entry.endsWith('.json')) mkdirSync(path, { recursive: true });
      if (existsSync(path)) state.push(realOr(path));
    }
  }
  const program = programPaths(options.command, options.env.PATH, homes);
  const { masks, incomplete } = masksFor(options.denied ?? [], [...folders, ...state]);
  for (const path of options.hide ?? []) {
    if (!existsSync(path) || masks.some((m) => m.path === realOr(path))) continue;
    masks.push({ path: realOr(path), folder: statSync(path).isDirectory() });
  }

  const args = ['--die-with-parent', '--unshare-pid', '--new-session', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp'];
  for (const home of homes) args.push('--tmpfs', home);
  for (const path of program) args.push('--ro-bind', path, path);
  for (const path of state) args.push('--bind', path, path);
  for (const path of options.readOnly ?? []) if (existsSync(path)) args.push('--ro-bind', realOr(path), realOr(path));
  for (const folder of folders) args.push('--bind', folder, folder);
  for (const folder of folders) for (const entry of READ_ONLY_IN_FOLDERS) args.push('--ro-bind-try', join(folder, entry), join(folder, entry));
  for (const overlay of options.overlays ?? []) {
    const at = join(realOr(dirname(overlay.path)), basename(overlay.path));
    if (overlay.source) args.push('--ro-bind', realOr(overlay.source), at);
    else if (overlay.folder) args.push('--tmpfs', at, '--remount-ro', at);
    else args.push('--ro-bind', emptyFile(), at);
  }
  for (const mask of masks) {
    if (mask.folder) args.push('--tmpfs', mask.path, '--remount-ro', mask.path);
    else args.push('--ro-bind', emptyFile(), mask.path);
  }
  args.push('--chdir', realOr(resolve(options.cwd)));
  return { command: ['bwrap', ...args, '--', ...options.command], env, masked: masks, incomplete };
}

/**
 * Where the agent's program lives, to keep readable over a hidden home or temp folder: the program
 * (found on PATH), every argument that is an existing file (a script), and a script's interpreter
 * (`#!/usr/bin/env node`). For each, the folder of the name it was called by and the folder it is
 * installed in: the package's prefix when it is inside `node_modules`, the prefix of a `bin` folder
 * (a virtualenv, an nvm version), else its own folder — never a home folder itself or above one.
 */
function programPaths(command: readonly string[], pathVariable: string | undefined, homes: readonly string[]): string[] {
  const found = new Set<string>();
  const files: string[] = [];
  const [program, ...args] = command;
  const located = program ? which(program, pathVariable) : undefined;
  if (located) files.push(located);
  for (const arg of args) if (isAbsolute(arg) && isFile(arg)) files.push(arg);
  for (const file of [...files]) {
    const interpreter = shebangOf(file, pathVariable);
    if (interpreter) files.push(interpreter);
  }
  const tooHigh = (dir: string) => dir === '/' || homes.some((home) => home === dir || home.startsWith(`${dir}${sep}`));
  for (const file of files) {
    found.add(dirname(file));
    const real = realOr(file);
    const modules = real.indexOf(`${sep}node_modules${sep}`);
    let root = modules > 0 ? real.slice(0, modules) : basename(dirname(real)) === 'bin' ? dirname(dirname(real)) : dirname(real);
    if (tooHigh(root)) root = dirname(real);
    found.add(root);
  }
  return [...found].filter((dir) => !tooHigh(dir) && existsSync(dir)).sort((a, b) => a.length - b.length);
}

function which(program: string, pathVariable: string | undefined): string | undefined {
  if (program.includes('/')) return isFile(resolve(program)) ? resolve(program) : undefined;
  for (const dir of (pathVariable ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    if (isFile(candidate)) return candidate;
  }
  return undefined;
}

function shebangOf(file: string, pathVariable: string | undefined): string | undefined {
  let head: string;
  try {
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(256);
      head = buffer.toString('latin1', 0, readSync(fd, buffer, 0, 256, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const match = /^#!\s*(\S+)(?:\s+(\S+))?/.exec(head);
  if (!match) return undefined;
  if (basename(match[1]!) === 'env' && match[2]) return which(match[2], pathVariable);
  return isFile(match[1]!) ? match[1] : undefined;
}

let empty: string | undefined;

/** An empty, read-only file to mount over a masked one (a device such as /dev/null is refused on the nodev mount). */
function emptyFile(): string {
  if (empty && existsSync(empty)) return empty;
  const folder = mkdtempSync(join(tmpdir(), 'sage-sandbox-'));
  empty = join(folder, 'empty');
  writeFileSync(empty, '', { mode: 0o444 });
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  return empty;
}

function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function unique(items: readonly string[]): string[] {
  return [...new Set(items)];
}
