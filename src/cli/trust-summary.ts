import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** What a folder's own files turn on once it is trusted: the lines `sage trust` prints. */
export interface TrustSummary {
  /** Settings files whose allow rules, hooks, mode and approval settings then apply. */
  settingsFiles: string[];
  allowRules: number;
  /** Hook events the settings files name. */
  hooks: string[];
  /** MCP servers the folder's files define, with the file each is in. */
  mcpServers: Array<{ name: string; file: string }>;
  /** Agent definitions and skills of `.sage/` and `.claude/`. */
  agents: string[];
  skills: string[];
}

export function trustSummary(folder: string): TrustSummary {
  const settingsFiles = [path.join(folder, '.sage', 'settings.json'), path.join(folder, '.sage', 'settings.local.json')].filter((f) => existsSync(f));
  const summary: TrustSummary = { settingsFiles, allowRules: 0, hooks: [], mcpServers: [], agents: [], skills: [] };
  for (const file of settingsFiles) {
    const json = readObject(file);
    const allow = (json?.['permissions'] as { allow?: unknown } | undefined)?.allow;
    if (Array.isArray(allow)) summary.allowRules += allow.length;
    const hooks = json?.['hooks'];
    if (isObject(hooks)) for (const event of Object.keys(hooks)) if (!summary.hooks.includes(event)) summary.hooks.push(event);
    addServers(summary, file, json?.['mcpServers']);
  }
  const mcpJson = path.join(folder, '.mcp.json');
  if (existsSync(mcpJson)) addServers(summary, mcpJson, readObject(mcpJson)?.['mcpServers']);
  for (const base of ['.sage', '.claude']) {
    summary.agents.push(...entries(path.join(folder, base, 'agents')).filter((f) => f.endsWith('.md')));
    summary.skills.push(...entries(path.join(folder, base, 'skills')).filter((d) => existsSync(path.join(d, 'SKILL.md'))));
  }
  return summary;
}

/** The summary as lines for a person; an empty folder says so. */
export function describeTrustSummary(summary: TrustSummary): string[] {
  const lines: string[] = [];
  if (summary.settingsFiles.length) lines.push(`settings: ${summary.settingsFiles.join(', ')} (${summary.allowRules} allow rule${summary.allowRules === 1 ? '' : 's'}; hooks, defaultMode, additionalDirectories and approval settings)`);
  if (summary.hooks.length) lines.push(`hooks: ${summary.hooks.join(', ')}`);
  if (summary.mcpServers.length) lines.push(`MCP servers (started by runs here): ${summary.mcpServers.map((s) => `${s.name} (${s.file})`).join(', ')}`);
  if (summary.agents.length) lines.push(`agents: ${summary.agents.join(', ')}`);
  if (summary.skills.length) lines.push(`skills: ${summary.skills.join(', ')}`);
  if (!lines.length) lines.push('nothing yet: the folder has no settings files, hooks, MCP servers, agents or skills; any it gets later apply');
  return lines;
}

function addServers(summary: TrustSummary, file: string, servers: unknown): void {
  if (isObject(servers)) for (const name of Object.keys(servers)) summary.mcpServers.push({ name, file });
}

function entries(dir: string): string[] {
  try {
    return readdirSync(dir).sort().map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

/** A settings-shaped JSON file as an object; undefined when it is missing, broken or not an object. */
export function readObject(file: string): Record<string, unknown> | undefined {
  try {
    const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return isObject(json) ? json : undefined;
  } catch {
    // A broken file is reported when a run loads it; the summary lists what it can read.
    return undefined;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
