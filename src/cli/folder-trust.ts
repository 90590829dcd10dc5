import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { styleText } from 'node:util';
import type { RunFlags } from './run-flags.js';
import { projectMcpFiles } from '../mcp/config.js';
import { loadSettings, trustFolder } from '../permission/index.js';

/**
 * Asks the person whether to trust `cwd` when its own settings hold allow rules or hooks and the
 * folder is not trusted yet (remembered when they say yes). A session asks this before its banner,
 * as it always did; the run factory then finds the folder trusted.
 */
export async function offerFolderTrust(flags: RunFlags, cwd: string): Promise<void> {
  if (!canAsk(flags)) return;
  const home = process.env.SAGE_HOME ?? homedir();
  const settings = loadSettings({ projectRoot: cwd, home });
  if (settings.trusted) return;
  // A project's MCP servers (.mcp.json) are programs it would start: they too wait for trust.
  const mcp = projectMcpFiles(cwd);
  // Only this folder's own files: a folder above keeps its own trust (its deny and ask rules apply either way).
  const own = [settings.files.local, settings.files.project];
  if (!settings.problems.some((p) => own.includes(p.file) && p.problem.includes('until this folder is trusted')) && mcp.length === 0) return;
  if (await askTrust(cwd, { ...settings.files, ...(mcp.length ? { mcp: mcp.join(' and ') } : {}) })) trustFolder(home, cwd);
}

export function canAsk(flags: RunFlags): boolean {
  // The flags first: process.stdin is built on first touch, which a run without a person never needs.
  return !flags.batch && !flags.nonInteractive && Boolean(process.stdin.isTTY);
}

export async function askTrust(cwd: string, files: Record<string, string | undefined>): Promise<boolean> {
  const { select } = await import('@inquirer/prompts');
  const which = [...new Set([files.project, files.local, ...(files.mcp?.split(' and ') ?? [])].filter((f): f is string => Boolean(f) && existsSync(f!)))].join(' and ');
  process.stderr.write(`${styleText(['bold', 'yellow'], '◆ Do you trust this folder?')}\n  ${cwd}\n  ${styleText('dim', `${which} contain allow rules, hooks or MCP servers, which apply (or start) only in folders you trust. Deny and ask rules apply either way.`)}\n`);
  try {
    return await select({ message: 'Trust this folder?', choices: [{ name: 'Yes, trust it (remembered)', value: true }, { name: 'No, ignore its allow rules, hooks and MCP servers', value: false }] }, { output: process.stderr });
  } catch {
    return false;
  }
}
