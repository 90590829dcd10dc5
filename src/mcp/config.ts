import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { isFolderTrusted } from '../permission/trusted-folders.js';
import { McpConfigError } from './errors.js';

/**
 * A server name becomes part of tool names (`mcp__<server>__<tool>`), and permission rules find the
 * server as the text between `mcp__` and the next `__`. A name holding `__` (or starting or ending
 * with `_`) would let `mcp__a__b__x` be read as server `a`, so a deny on `mcp__a__b` would miss it:
 * such names are refused, not rewritten.
 */
export const SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;

const stringRecord = z.record(z.string(), z.string({ error: 'each value must be a string' }));

const stdioServerSchema = z
  .object({
    type: z.literal('stdio').optional().describe('"stdio" (the default when absent): Sage starts the program'),
    command: z.string({ error: 'a stdio server needs a command (the program to start)' }).min(1, 'command is empty')
      .describe('The program to start'),
    args: z.array(z.string({ error: 'each argument must be a string' })).optional().describe('Its arguments'),
    env: stringRecord.optional()
      .describe('Variables it gets; ${VAR} and ${VAR:-default} are read from the environment'),
    /** Where the server starts; relative to the run's cwd. Default: the run's cwd. */
    cwd: z.string().min(1).optional().describe('Where it starts, relative to the run\'s folder (default: that folder)'),
    /** How long one tool call may take before the call fails and the server is restarted, ms. */
    timeout: z.number().int().positive().optional()
      .meta({
        description: 'Milliseconds one tool call may take before it fails and the server is restarted',
        default: 120_000,
      }),
  })
  .strict();

const httpServerSchema = z
  .object({
    type: z.literal('http').describe('"http": a Streamable HTTP server'),
    url: z.string({ error: 'an http server needs a url' }).min(1, 'url is empty').describe('Its URL'),
    headers: stringRecord.optional().describe('Headers sent with every request; ${VAR} is read from the environment'),
    timeout: z.number().int().positive().optional()
      .meta({ description: 'Milliseconds one tool call may take', default: 120_000 }),
  })
  .strict();

/** One server entry, as Claude Code's `.mcp.json` writes it (stdio when `type` is absent). */
export const mcpServerConfigSchema = z.union([stdioServerSchema, httpServerSchema], {
  error: 'a server is { "command", "args", "env" } (stdio) or { "type": "http", "url", "headers" }',
});
export type McpServerConfig = z.infer<typeof mcpServerConfigSchema>;

/** The servers of a run by name; what its RunSpec keeps (unexpanded: `${VAR}` is read when a process starts the server). */
export type McpServers = Record<string, McpServerConfig>;

/** A problem that does not stop the run: a project file not used before trust, a skipped tool. */
export interface McpNotice {
  file: string;
  message: string;
}

/**
 * Validates an `mcpServers` object found in `file` (under `fieldPrefix`). Throws McpConfigError
 * naming the file and the field: a server that cannot be understood is never silently dropped.
 */
export function parseMcpServers(value: unknown, file: string, fieldPrefix = 'mcpServers'): McpServers {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new McpConfigError(file, fieldPrefix, 'must be an object of servers by name');
  const out: McpServers = {};
  for (const [name, entry] of Object.entries(value as Record<string, unknown>)) {
    const field = `${fieldPrefix}.${name}`;
    if (!SERVER_NAME.test(name)) throw new McpConfigError(file, field, 'a server name is letters, digits, - and single _ (no "__", no leading or trailing _), because it becomes part of mcp__<server>__<tool>');
    if (typeof entry === 'object' && entry !== null && (entry as { type?: unknown }).type === 'sse') {
      throw new McpConfigError(file, `${field}.type`, 'the "sse" transport is deprecated in MCP and not supported; use "type": "http" (Streamable HTTP)');
    }
    const parsed = mcpServerConfigSchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      // A union reports its own message; the branch's first issue names the field better.
      const inner = (issue as { errors?: z.core.$ZodIssue[][] }).errors;
      const best = inner?.map((b) => b[0]).find((i) => i && i.path.length > 0) ?? issue;
      const where = best.path.length ? `${field}.${best.path.map(String).join('.')}` : field;
      throw new McpConfigError(file, where, best === issue ? issue.message : best.message);
    }
    if (parsed.data.type === 'http') {
      // Checked after expansion too; a literal that is not a URL is already wrong here.
      if (!parsed.data.url.includes('${') && !/^https?:\/\//i.test(parsed.data.url)) throw new McpConfigError(file, `${field}.url`, 'must be an http:// or https:// URL');
    }
    out[name] = parsed.data;
  }
  return out;
}

/** Reads a file shaped like `.mcp.json`: `{ "mcpServers": { … } }`. */
export function loadMcpConfigFile(file: string): McpServers {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new McpConfigError(file, '(file)', `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(file, '(file)', `is not valid JSON (${(error as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new McpConfigError(file, '(root)', 'must be an object with "mcpServers"');
  const servers = (json as { mcpServers?: unknown }).mcpServers;
  if (servers === undefined) throw new McpConfigError(file, 'mcpServers', 'is missing; the file is { "mcpServers": { "name": { … } } }');
  return parseMcpServers(servers, file);
}

function settingsServers(file: string): McpServers | undefined {
  if (!existsSync(file)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    // A settings file that is not JSON is reported (and fails closed) by the settings loader.
    return undefined;
  }
  const servers = (json as { mcpServers?: unknown } | null)?.mcpServers;
  return servers === undefined ? undefined : parseMcpServers(servers, file);
}

export interface ResolveMcpOptions {
  cwd: string;
  home: string;
  /** `--mcp-config FILE` (repeatable): the person named them, so they apply without folder trust. */
  configFiles?: readonly string[];
}

/**
 * The MCP servers a new run gets, later sources winning by name: `mcpServers` in
 * `~/.sage/settings.json`; then, only once the folder is trusted (a repository must not start
 * programs on its own), `.sage/settings.json`, `.sage/settings.local.json` and Claude Code's
 * `.mcp.json`; then each `--mcp-config FILE`.
 */
/** A project file whose servers are not started until its folder is trusted. */
export interface McpWaitingForTrust {
  file: string;
  servers: string[];
}

export function resolveMcpServers(options: ResolveMcpOptions): { servers: McpServers; notices: McpNotice[]; waitingForTrust: McpWaitingForTrust[] } {
  const servers: McpServers = {};
  const notices: McpNotice[] = [];
  const waitingForTrust: McpWaitingForTrust[] = [];
  // `--mcp-config .mcp.json` names the project's file itself: its servers start, they do not wait.
  const named = new Set((options.configFiles ?? []).map((file) => path.resolve(options.cwd, file)));
  const wait = (file: string, names: string[]) => {
    notices.push({ file, message: `its MCP servers (${names.join(', ')}) are not started until this folder is trusted` });
    if (!named.has(file)) waitingForTrust.push({ file, servers: names });
  };
  const add = (found: McpServers | undefined) => Object.assign(servers, found ?? {});
  add(settingsServers(path.join(options.home, '.sage', 'settings.json')));
  const projectFiles = [path.join(options.cwd, '.sage', 'settings.json'), path.join(options.cwd, '.sage', 'settings.local.json')];
  const mcpJson = path.join(options.cwd, '.mcp.json');
  const trusted = isFolderTrusted(options.home, options.cwd);
  for (const file of projectFiles) {
    const found = settingsServers(file);
    if (!found || Object.keys(found).length === 0) continue;
    if (trusted) add(found);
    else wait(file, Object.keys(found));
  }
  if (existsSync(mcpJson)) {
    const found = loadMcpConfigFile(mcpJson);
    if (trusted) add(found);
    else if (Object.keys(found).length) wait(mcpJson, Object.keys(found));
  }
  for (const file of options.configFiles ?? []) add(loadMcpConfigFile(path.resolve(options.cwd, file)));
  return { servers, notices, waitingForTrust };
}

/** The project's files that name MCP servers (`.mcp.json`, `mcpServers` in `.sage/settings*.json`): what folder trust would start. */
export function projectMcpFiles(cwd: string): string[] {
  const files: string[] = [];
  const mcpJson = path.join(cwd, '.mcp.json');
  if (existsSync(mcpJson)) files.push(mcpJson);
  for (const file of [path.join(cwd, '.sage', 'settings.json'), path.join(cwd, '.sage', 'settings.local.json')]) {
    if (!existsSync(file)) continue;
    try {
      const json = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers?: unknown } | null;
      if (json && typeof json.mcpServers === 'object' && json.mcpServers !== null && Object.keys(json.mcpServers).length) files.push(file);
    } catch {
      // Not JSON: the settings loader reports it.
    }
  }
  return files;
}

/**
 * `${VAR}` and `${VAR:-default}` in a value, as Claude Code expands them in `.mcp.json`. A variable
 * that is unset and has no default is an error naming the server and field (a token left as the
 * literal text `${TOKEN}` would fail later, less clearly).
 */
export function expandEnv(value: string, env: NodeJS.ProcessEnv, where: { server: string; field: string }): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    throw new McpConfigError(`MCP server ${where.server}`, where.field, `the environment variable ${name} is not set (write \${${name}:-default} for a default)`);
  });
}

/** A server's config with its `${VAR}`s read from `env`. */
export function expandServer(name: string, config: McpServerConfig, env: NodeJS.ProcessEnv = process.env): McpServerConfig {
  const ex = (value: string, field: string) => expandEnv(value, env, { server: name, field });
  const record = (r: Record<string, string> | undefined, field: string) => (r ? Object.fromEntries(Object.entries(r).map(([k, v]) => [k, ex(v, `${field}.${k}`)])) : undefined);
  if (config.type === 'http') {
    const url = ex(config.url, 'url');
    if (!/^https?:\/\//i.test(url)) throw new McpConfigError(`MCP server ${name}`, 'url', 'must be an http:// or https:// URL');
    const headers = record(config.headers, 'headers');
    return { ...config, url, ...(headers ? { headers } : {}) };
  }
  const env2 = record(config.env, 'env');
  return {
    ...config,
    command: ex(config.command, 'command'),
    ...(config.args ? { args: config.args.map((a, i) => ex(a, `args.${i}`)) } : {}),
    ...(env2 ? { env: env2 } : {}),
  };
}
