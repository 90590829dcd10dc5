import { z } from 'zod';
import { formatZodError } from '../errors/index.js';
import { storedRunOptionsSchema, type RunSurface, type StoredRunOptions } from '../durable/stored-options.js';
import type { RunRecord } from '../store/index.js';
import { RunSpecError } from './errors.js';

export type { RunSurface } from '../durable/stored-options.js';

/** One permission rule of a run, with where it came from. */
export interface RunRule {
  behavior: 'allow' | 'ask' | 'deny';
  rule: string;
  source: string;
}

/**
 * Everything a run is built from, whatever version stored it: the stored options (version 1 or
 * 2) of a record read into one shape. The factory (create-run.ts) builds a run from this alone,
 * so a resumed run gets exactly what it started with.
 */
export interface RunSpec {
  runId: string;
  task: string;
  model: string;
  baseUrl?: string;
  cwd: string;
  /** The outermost folder whose settings apply (see stored-options); undefined: found from cwd. */
  projectRoot?: string;
  additionalDirectories: string[];
  surface: RunSurface;
  startedBy: string;
  parentRunId?: string;
  /** interactive (someone answers), non-interactive (automatic answers), batch (asks become denials). */
  mode: StoredRunOptions['mode'];
  permissionMode?: 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions' | 'dontAsk';
  rules: RunRule[];
  /** A run admitted by the server: its requester's role and the server policy's lists then. */
  server?: { role: 'user' | 'admin'; deny: string[]; ask: string[] };
  ignoreBrokenSettings: boolean;
  tools?: string[];
  /** The run's MCP servers (src/mcp validates them when the run is built). */
  mcpServers?: Record<string, Record<string, unknown>>;
  oneTask: boolean;
  maxSteps?: number;
  interactionTimeoutMs?: number;
  executionTimeoutMs?: number;
  system?: string;
  /** An external coding agent does the work (src/agents). */
  agent?: StoredRunOptions['agent'];
  /** The action chain around the work: setup and cleanup scripts. */
  chain?: StoredRunOptions['chain'];
}

/** What version 1 CLI runs (`sage run --detach`) kept in `metadata.cli`. */
const v1CliSchema = z
  .object({
    allow: z.array(z.string()).default([]),
    ask: z.array(z.string()).default([]),
    deny: z.array(z.string()).default([]),
    permissionMode: z.enum(['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk']).optional(),
    baseUrl: z.string().url().optional(),
    oneShot: z.boolean().optional(),
  })
  .passthrough();

/**
 * Reads a stored run into its RunSpec. Throws RunSpecError naming the run and the field when the
 * stored options (of any version) no longer validate — an edited database, a removed field.
 */
export function runSpecOf(run: RunRecord): RunSpec {
  const parsed = storedRunOptionsSchema.safeParse(run.options);
  if (!parsed.success) throw new RunSpecError(run.id, formatZodError(parsed.error));
  const options = parsed.data;
  const common = {
    runId: run.id,
    task: run.task,
    model: options.model,
    cwd: options.cwd ?? process.cwd(),
    ...(options.projectRoot ? { projectRoot: options.projectRoot } : {}),
    additionalDirectories: options.additionalDirectories ?? [],
    startedBy: options.origin?.startedBy ?? run.userId,
    mode: options.mode,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    ...(options.interactionTimeoutMs !== undefined ? { interactionTimeoutMs: options.interactionTimeoutMs } : {}),
    ...(options.executionTimeoutMs ? { executionTimeoutMs: options.executionTimeoutMs } : {}),
    ...(options.system !== undefined ? { system: options.system } : {}),
    ...(options.origin?.parentRunId ? { parentRunId: options.origin.parentRunId } : {}),
    ...(options.agent ? { agent: options.agent } : {}),
    ...(options.chain ? { chain: options.chain } : {}),
  };
  if (options.permissions || options.origin) {
    const permissions = options.permissions ?? { rules: [], ignoreBrokenSettings: false };
    return {
      ...common,
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
      surface: options.origin?.surface ?? surfaceOfChannel(run.channel),
      ...(permissions.mode ? { permissionMode: permissions.mode } : {}),
      rules: permissions.rules,
      ...(permissions.server ? { server: permissions.server } : {}),
      ignoreBrokenSettings: permissions.ignoreBrokenSettings,
      oneTask: options.oneTask ?? false,
    };
  }
  // Version 1: a web run's lists are read by the web gate from `metadata`; a CLI run's from `metadata.cli`.
  const surface = surfaceOfChannel(run.channel);
  if (surface === 'web') return { ...common, surface, rules: [], ignoreBrokenSettings: false, oneTask: false };
  const cli = v1CliSchema.safeParse((options.metadata as { cli?: unknown } | undefined)?.cli ?? {});
  if (!cli.success) throw new RunSpecError(run.id, cli.error.issues.map((i) => `metadata.cli.${i.path.map(String).join('.')}: ${i.message}`).join('; '));
  const lists = cli.data;
  return {
    ...common,
    ...(lists.baseUrl ? { baseUrl: lists.baseUrl } : {}),
    surface,
    ...(lists.permissionMode ? { permissionMode: lists.permissionMode } : {}),
    rules: [
      ...lists.deny.map((rule) => ({ behavior: 'deny' as const, rule, source: 'cli' })),
      ...lists.ask.map((rule) => ({ behavior: 'ask' as const, rule, source: 'cli' })),
      ...lists.allow.map((rule) => ({ behavior: 'allow' as const, rule, source: 'cli' })),
    ],
    ignoreBrokenSettings: false,
    oneTask: lists.oneShot ?? false,
  };
}

/** Version 1 runs name only their channel: `web` for the server, `cli` for `sage run --detach`. */
function surfaceOfChannel(channel: string): RunSurface {
  if (channel === 'web') return 'web';
  if (channel === 'cli') return 'detached';
  return 'sdk';
}

/** The rules of a spec as the three lists the permission engine's helpers take. */
export function ruleLists(rules: readonly RunRule[], source?: string): { allow: string[]; ask: string[]; deny: string[] } {
  const pick = (behavior: RunRule['behavior']) => rules.filter((r) => r.behavior === behavior && (source === undefined || r.source === source)).map((r) => r.rule);
  return { allow: pick('allow'), ask: pick('ask'), deny: pick('deny') };
}
