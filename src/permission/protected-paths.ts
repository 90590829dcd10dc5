import path from 'node:path';
import type { CallSubject } from './call-subject.js';
import { SHELL_STARTUP_FILES } from './command-lists.js';

/** Folders whose files configure what later runs: agents' and editors' settings, git hooks, ssh keys. */
const PROTECTED_SEGMENTS = new Set(['.git', '.sage', '.claude', '.vscode', '.idea', '.husky', '.ssh', '.gnupg', '.devcontainer']);
/** Files of those kinds, wherever they are: shell start-up files, git, package-manager and MCP config. */
const PROTECTED_NAMES = new Set([
  ...SHELL_STARTUP_FILES.filter((f) => !f.includes('/')),
  '.gitconfig', '.gitmodules', '.gitattributes', '.mcp.json', '.npmrc', '.yarnrc', '.yarnrc.yml', '.pnpmrc', '.pypirc',
  '.netrc', '.envrc', '.tool-versions', '.mise.toml', 'mise.toml', '.pre-commit-config.yaml',
].map((n) => n.toLowerCase()));

/**
 * Writes into `.git`, `.sage`, `.claude`, `.vscode`… or to shell start-up and tool config files are
 * asked in every mode but bypass (acceptEdits included), whatever the allow rules say: they change
 * what later runs (hooks, settings, every new shell).
 */
const startupByHome = new Map<string, Set<string>>();

export function protectedWrite(subject: CallSubject, home: string): string | undefined {
  if (subject.writes.length === 0) return undefined;
  let startup = startupByHome.get(home);
  if (!startup) {
    startup = new Set(SHELL_STARTUP_FILES.map((f) => path.join(home, f).toLowerCase()));
    startupByHome.set(home, startup);
  }
  for (const p of subject.writes) {
    for (const candidate of [p.abs, p.real]) {
      const lower = candidate.toLowerCase();
      const segments = lower.split('/');
      const folder = segments.find((segment) => PROTECTED_SEGMENTS.has(segment));
      if (folder) return `it writes ${p.raw}, inside a ${folder} folder`;
      if (startup.has(lower) || PROTECTED_NAMES.has(segments.at(-1)!)) return `it writes ${p.raw}, a shell start-up or tool configuration file`;
    }
  }
  return undefined;
}

/** `rm` of `/`, home, the project or a parent: asked in every mode, bypass included. */
export function criticalRemoval(subject: CallSubject): string | undefined {
  return subject.commands.find((c) => c.critical)?.critical;
}
