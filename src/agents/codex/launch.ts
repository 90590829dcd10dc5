import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import type { Overlay } from '../../sandbox/index.js';
import { AgentConfigError } from '../errors.js';
import { writePrivateFile } from '../private-file.js';

/**
 * The keys of the person's own `config.toml` that Sage's copy keeps: which model Codex talks to and
 * how it logs in. Everything else — approval policy, sandbox, MCP servers, notify and hooks,
 * profiles, projects' trust, plugins, shell environment, paths Codex would load files from — is
 * Sage's to decide or left at Codex's default.
 */
export const CODEX_CONFIG_KEYS = [
  'model', 'model_provider', 'model_providers', 'model_reasoning_effort', 'model_reasoning_summary', 'model_verbosity',
  'model_context_window', 'model_auto_compact_token_limit', 'forced_login_method', 'forced_chatgpt_workspace_id',
  'cli_auth_credentials_store', 'chatgpt_base_url',
] as const;

/**
 * Config sources under CODEX_HOME besides `config.toml` (Codex 0.171.0): emptied inside the
 * sandbox whether or not they exist, so what a run writes there is never read by a later start.
 * Folders end in `/`.
 */
const EMPTIED = ['managed_config.toml', 'requirements.toml', 'environments.toml', 'hooks.json', 'hooks/', 'rules/', 'agents/'];

/** The person's own instructions to Codex: kept readable when they exist, never writable; empty when not. */
const KEPT_READ_ONLY = ['AGENTS.md', 'AGENTS.override.md'];

/** The folder Codex keeps its config, login and sessions in. */
export function codexHomeOf(env: Readonly<Record<string, string>>): string {
  return env.CODEX_HOME || join(env.HOME || homedir(), '.codex');
}

/**
 * The `config.toml` Sage gives Codex: the model and login keys of the person's own file. Throws AgentConfigError naming the file when it is not TOML (Codex would refuse it too).
 */
export function sageCodexConfig(ownConfig: string | undefined, file = 'config.toml'): string {
  let own: Record<string, unknown> = {};
  if (ownConfig !== undefined) {
    try {
      own = parse(ownConfig) as Record<string, unknown>;
    } catch (error) {
      throw new AgentConfigError(`${file} is not valid TOML (${(error as Error).message.split('\n')[0]}); fix it or move it away before starting Codex.`);
    }
  }
  const kept: Record<string, unknown> = {};
  for (const key of CODEX_CONFIG_KEYS) if (own[key] !== undefined) kept[key] = own[key];
  // Approvals and sandbox are thread/start's parameters (Codex 0.171.0 refuses `approval_policy = "untrusted"` here).
  return `# Written by Sage for one Codex run, read-only to Codex; your own config.toml is not read.\n${stringify(kept)}\n`;
}

/**
 * What a sandboxed Codex reads as its configuration: Sage's `config.toml` (a private file, 0600,
 * under the agent files folder) mounted read-only over `CODEX_HOME/config.toml`, the other config
 * sources emptied or kept read-only. The rest of CODEX_HOME (sessions, logs, login) stays writable.
 * `dispose` removes Sage's file once Codex has exited.
 */
export function codexConfinement(env: Readonly<Record<string, string>>): { overlays: Overlay[]; dispose: () => void } {
  const home = codexHomeOf(env);
  const ownPath = join(home, 'config.toml');
  const own = existsSync(ownPath) ? readFileSync(ownPath, 'utf8') : undefined;
  const config = writePrivateFile('config.toml', sageCodexConfig(own, ownPath));
  const overlays: Overlay[] = [{ path: ownPath, source: config.path }];
  for (const entry of EMPTIED) overlays.push({ path: join(home, entry.replace(/\/$/, '')), folder: entry.endsWith('/') });
  for (const entry of KEPT_READ_ONLY) {
    const path = join(home, entry);
    overlays.push(existsSync(path) ? { path, source: path } : { path, folder: false });
  }
  // The sandbox leaves the mount points it made in CODEX_HOME behind: the empty ones are removed after the run.
  const made = overlays.filter((o) => !existsSync(o.path)).map((o) => o.path);
  return {
    overlays,
    dispose: () => {
      config.dispose();
      for (const path of made) removeIfEmpty(path);
    },
  };
}

function removeIfEmpty(path: string): void {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return;
  if (stat.isDirectory() && readdirSync(path).length === 0) rmdirSync(path);
  else if (stat.isFile() && stat.size === 0) rmSync(path, { force: true });
}

/**
 * thread/start's `config` for a Codex outside Sage's sandbox, which reads the person's own
 * `config.toml` (writable to it) and, in a project that file trusts, the project's
 * `.codex/config.toml`: each MCP server named in either turned off (checked on 0.171.0 with a
 * trusted project's server, and with a project's server Codex did not load). Codex merges this table into
 * its config key by key, so an empty `mcp_servers` would keep them all.
 */
export function unsandboxedCodexOverrides(env: Readonly<Record<string, string>>, cwd: string): Record<string, unknown> {
  const servers = new Map<string, Record<string, unknown>>();
  for (const path of [join(codexHomeOf(env), 'config.toml'), join(cwd, '.codex', 'config.toml')]) {
    if (!existsSync(path)) continue;
    let config: Record<string, unknown>;
    try {
      config = parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new AgentConfigError(`${path} is not valid TOML (${(error as Error).message.split('\n')[0]}); fix it or move it away before starting Codex.`);
    }
    const named = config.mcp_servers && typeof config.mcp_servers === 'object' ? (config.mcp_servers as Record<string, Record<string, unknown>>) : {};
    // Each keeps its transport: Codex refuses a server without one, even a turned-off one (a project's
    // server whose project Codex does not trust is not in its config at all).
    for (const [name, server] of Object.entries(named)) {
      servers.set(name, { enabled: false, ...(server?.url !== undefined ? { url: server.url } : { command: typeof server?.command === 'string' ? server.command : 'false' }) });
    }
  }
  return servers.size ? { mcp_servers: Object.fromEntries(servers) } : {};
}
