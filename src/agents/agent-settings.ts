import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { formatZodError } from '../errors/index.js';
import { loadSettings } from '../permission/settings-loader.js';
import { AgentConfigError } from './errors.js';

export const agentEntrySchema = z
  .object({
    /** The program and its arguments: one string (split like a shell line, nothing expanded) or a list. */
    command: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional()
      .describe('The program and its arguments: one string (split like a shell line, nothing expanded) or a list'),
    /** Arguments added after the command. */
    args: z.array(z.string()).optional().describe('Arguments added after the command'),
    /** Variables the agent gets besides its curated environment. */
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name'), z.string()).optional()
      .describe('Variables the agent gets besides PATH, HOME, the locale and its own'),
    /** The agent's OS sandbox (default on); `off` from the managed, user or local settings only. */
    sandbox: z.enum(['on', 'off'], { message: 'sandbox must be "on" or "off"' }).optional()
      .meta({ description: 'The agent\'s OS sandbox; "off" only from user, local or managed settings', default: 'on' }),
  })
  .strict();

export const chainSchema = z
  .object({
    setup: z.string().min(1).optional()
      .describe('A script run in the run\'s folder before the work; if it fails, nothing else runs'),
    cleanup: z.string().min(1).optional().describe('A script run after the work succeeded; its output is shown'),
  })
  .strict();

export type AgentSettingsEntry = z.infer<typeof agentEntrySchema>;
export type ChainSettings = z.infer<typeof chainSchema>;

/** The settings files a run reads, in precedence order, and whether each applies (a project's only once trusted). */
export interface SettingsFiles {
  managed?: string;
  local?: string;
  project?: string;
  user?: string;
  trusted: boolean;
}

/**
 * The `agents.<name>` entry and the `chain` of the settings, by precedence: managed > local >
 * project > user; a project's own files count only once the folder is trusted (a cloned repository
 * must not choose which program runs as your agent, nor a setup script). A value that does not
 * validate stops the run, naming the file and the field.
 */
export function readAgentSettings(files: SettingsFiles, agent: string | undefined): { agent?: AgentSettingsEntry; chain?: ChainSettings } {
  const order: Array<[string | undefined, boolean]> = [
    [files.managed, true],
    [files.local, files.trusted],
    [files.project, files.trusted],
    [files.user, true],
  ];
  let found: { agent?: AgentSettingsEntry; chain?: ChainSettings } = {};
  for (const [file, applies] of order) {
    if (!file || !applies) continue;
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      continue; // a missing or malformed file is reported by the settings check before any run
    }
    if (typeof json !== 'object' || json === null) continue;
    const record = json as { agents?: unknown; chain?: unknown };
    if (agent && found.agent === undefined && record.agents !== undefined) {
      const agents = z.record(z.string(), z.unknown()).safeParse(record.agents);
      if (!agents.success) throw new AgentConfigError(`${file} agents: must be an object of agent names.`);
      const entry = agents.data[agent];
      if (entry !== undefined) {
        const parsed = agentEntrySchema.safeParse(entry);
        if (!parsed.success) throw new AgentConfigError(`${file} agents.${agent}: ${formatZodError(parsed.error)}`);
        // A repository's committed settings must not take the agent out of its sandbox.
        if (parsed.data.sandbox === 'off' && file === files.project) {
          throw new AgentConfigError(`${file} agents.${agent}.sandbox: a project's shared settings cannot turn the agent's sandbox off; set it in your user or local settings, or pass --sandbox off.`);
        }
        found = { ...found, agent: parsed.data };
      }
    }
    if (found.chain === undefined && record.chain !== undefined) {
      const parsed = chainSchema.safeParse(record.chain);
      if (!parsed.success) throw new AgentConfigError(`${file} chain: ${formatZodError(parsed.error)}`);
      found = { ...found, chain: parsed.data };
    }
  }
  return found;
}

/**
 * The `agents.<name>` entry and `chain` of the settings that apply in `cwd`. Here rather than beside
 * resolveAgentRun: a run without an agent reads its chain without loading the agents' workers.
 */
export function agentSettings(cwd: string, home: string, name: string | undefined): { agent?: AgentSettingsEntry; chain?: ChainSettings } {
  const settings = loadSettings({ projectRoot: cwd, home });
  return readAgentSettings({ ...settings.files, trusted: settings.trusted }, name);
}
