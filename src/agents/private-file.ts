import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A file only this user can read, in a folder of its own (0700, file 0600), for what an agent must
 * read at start but must not see on its command line (an MCP server's token would be readable by
 * every local user in /proc/<pid>/cmdline). `dispose()` removes the folder; call it once the agent
 * has exited.
 */
export function writePrivateFile(name: string, content: string): { path: string; dispose: () => void } {
  const folder = mkdtempSync(path.join(tmpdir(), 'sage-agent-'));
  const file = path.join(folder, name);
  writeFileSync(file, content, { mode: 0o600 });
  return { path: file, dispose: () => rmSync(folder, { recursive: true, force: true }) };
}
