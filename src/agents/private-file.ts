import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';

/**
 * A file only this user can read, in a folder of its own (0700, file 0600), for what an agent must
 * read at start but must not see on its command line (an MCP server's token would be readable by
 * every local user in /proc/<pid>/cmdline). Under `~/.sage/agent-files`, not the temp folder:
 * Gemini CLI skips a system settings file any of whose parent folders others may write (as /tmp).
 * `dispose()` removes the folder; call it once the agent has exited.
 */
export function writePrivateFile(name: string, content: string, home?: string): { path: string; dispose: () => void } {
  const base = agentFilesRoot(home);
  mkdirSync(base, { recursive: true, mode: 0o700 });
  const folder = mkdtempSync(path.join(base, 'run-'));
  const file = path.join(folder, name);
  writeFileSync(file, content, { mode: 0o600 });
  return { path: file, dispose: () => rmSync(folder, { recursive: true, force: true }) };
}

/**
 * The folder the private files live in (made, 0700): an agent's sandbox keeps it readable over the
 * hidden home folder, as the agent reads its settings and MCP list from there.
 */
export function agentFilesRoot(home: string = process.env.SAGE_HOME || homedir()): string {
  const base = path.join(home, '.sage', 'agent-files');
  mkdirSync(base, { recursive: true, mode: 0o700 });
  return base;
}
