import { AgentConfigError } from './errors.js';

/** What every agent needs to run at all: where programs are, whose home, which locale, where temp files go. */
const BASE = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LANGUAGE', 'TZ'];

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The environment an external agent is started with, built from nothing: the basics, the locale
 * (LC_*), the agent's own variables (by prefix: ANTHROPIC_ and CLAUDE_ for Claude Code), and what
 * the settings or `--agent-env` add. Nothing else of the user's environment reaches the agent (no
 * AWS_*, no GITHUB_TOKEN, no other provider's key): it runs commands, and its tool calls are logged.
 */
export function curatedEnvironment(parent: NodeJS.ProcessEnv, ownPrefixes: readonly string[], extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (BASE.includes(name) || name.startsWith('LC_') || ownPrefixes.some((p) => name.startsWith(p))) env[name] = value;
  }
  for (const [name, value] of Object.entries(extra)) env[name] = value;
  return env;
}

/**
 * `--agent-env NAME[=VALUE]`: NAME alone passes Sage's own value of NAME (nothing if it is unset),
 * NAME=VALUE sets it. Returns the variables to add, checked.
 */
export function parseAgentEnv(items: readonly string[], parent: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    const name = eq < 0 ? item : item.slice(0, eq);
    if (!NAME.test(name)) throw new AgentConfigError(`--agent-env ${item}: "${name}" is not a variable name (letters, digits and _, not starting with a digit).`);
    if (eq >= 0) env[name] = item.slice(eq + 1);
    else if (parent[name] !== undefined) env[name] = parent[name]!;
  }
  return env;
}
