/* global process */
// Where the pinned agent programs live (shared by scripts/agents-install.mjs and the test support).
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `SAGE_AGENTS_CACHE`, else `$XDG_CACHE_HOME/sage-agents`, else `~/.cache/sage-agents`. */
export function agentsCacheRoot() {
  if (process.env.SAGE_AGENTS_CACHE) return process.env.SAGE_AGENTS_CACHE;
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cache, 'sage-agents');
}

/** The install prefix of one pinned program: `<root>/<package with / as +>@<version>`. */
export function programPrefix(program) {
  return join(agentsCacheRoot(), `${program.package.replace('/', '+')}@${program.version}`);
}
