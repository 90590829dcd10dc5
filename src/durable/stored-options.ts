import { z } from 'zod';
import { InvalidInputError, formatZodError } from '../errors/index.js';

/** Where a run was started from; the factory builds the gate a surface is owed (see src/runtime). */
export const RUN_SURFACES = ['terminal', 'detached', 'web', 'chat', 'subagent', 'sdk'] as const;

const ruleSchema = z
  .object({
    behavior: z.enum(['allow', 'ask', 'deny']),
    rule: z.string().min(1),
    /** Where the rule came from: `cli` (a flag), `request` (a web client), `parent run`, … */
    source: z.string().min(1),
  })
  .strict();

/**
 * The run's own permission settings (version 2). Settings files are not copied here: they are read
 * again for the run's cwd each time its gate is built, so an administrator's later deny applies.
 */
const permissionsSchema = z
  .object({
    mode: z.enum(['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk']).optional(),
    rules: z.array(ruleSchema).default([]),
    /** The person chose to go on without settings files that do not load (--ignore-broken-settings). */
    ignoreBrokenSettings: z.boolean().default(false),
    /**
     * A run admitted by the server (web, chat; their subagents): the requester's role and the server
     * policy's deny and ask rules then. Runs stored before it kept these in `metadata` (still read).
     */
    server: z
      .object({
        role: z.enum(['user', 'admin']),
        deny: z.array(z.string()).default([]),
        ask: z.array(z.string()).default([]),
      })
      .strict()
      .optional(),
  })
  .strict();

const originSchema = z
  .object({
    surface: z.enum(RUN_SURFACES),
    /** Who started it (an OS user, a web user id). */
    startedBy: z.string().min(1).optional(),
    /** The run that started this one (subagents). */
    parentRunId: z.string().min(1).optional(),
    /** A chat run (surface `chat`): the channel (`telegram`, or `kind:name` such as `slack:T123`, up to 64 + kind) whose chat it answers to. */
    channel: z.string().min(1).max(128).optional(),
    /** A chat run: the chat (and thread, where the platform has them) its replies and asks go to. */
    chatId: z.string().min(1).max(256).optional(),
    threadId: z.string().min(1).max(256).optional(),
  })
  .strict();

/** The external agent of a run (`sage run --agent NAME`): its preset and the command line this run uses. */
const agentSpecSchema = z
  .object({
    /** The preset: claude-code, gemini, qwen, codex, acp. */
    name: z.string().min(1).max(64),
    /** The program and its arguments, resolved when the run started (settings, --agent-command). */
    command: z.array(z.string().min(1)).min(1),
    /** Variables the agent gets besides its curated environment, as given (NAME=VALUE on the command line, settings). */
    env: z.record(z.string().min(1), z.string()).optional(),
    /** Variables passed through by name from the environment of the process that drives the run (never stored). */
    passEnv: z.array(z.string().min(1)).optional(),
    /** A follow-up: the agent's session to continue (--continue) or fork (--fork). */
    resumeSession: z.string().min(1).optional(),
    fork: z.boolean().optional(),
    /** The agent's OS sandbox (src/sandbox): on unless this says off (--sandbox off, agents.<name>.sandbox). */
    sandbox: z.enum(['on', 'off']).optional(),
  })
  .strict();

const chainSpecSchema = z
  .object({
    setup: z.string().min(1).optional(),
    cleanup: z.string().min(1).optional(),
  })
  .strict();

/**
 * What a durable run keeps of its options — its RunSpec — so any process can rebuild it: the model
 * as a spec string (`scripted:/abs/path.json`, `anthropic:claude-…`) that the runtime turns into a
 * Model. Functions (responders, hooks) cannot be stored; the runtime supplies them again.
 *
 * Version 1 (before the run factory) had no `origin`, `permissions`, `baseUrl`, `tools` or
 * `oneTask`: a CLI run kept its rules in `metadata.cli`, a web run in `metadata`. Both still load
 * (src/runtime/run-spec.ts reads either); new runs are written as version 2.
 */
export const storedRunOptionsSchema = z
  .object({
    version: z.union([z.literal(1), z.literal(2)]).default(2),
    model: z.string().min(1, 'a durable run needs a model spec'),
    /** Base URL of an OpenAI-compatible server (version 2; version 1 kept it in metadata.cli). */
    baseUrl: z.string().url().optional(),
    mode: z.enum(['interactive', 'non-interactive', 'batch']).default('interactive'),
    /** non-interactive mode: how asks are answered. */
    autoResponse: z.enum(['allow', 'deny', 'default']).optional(),
    maxSteps: z.number().int().positive().optional(),
    system: z.string().optional(),
    cwd: z.string().optional(),
    /**
     * The outermost folder whose settings apply to the run (its project root: the nearest folder
     * with `.git`, within the server's root): every folder from cwd up to it adds its deny and ask
     * rules. Kept so a resume reads the same folders wherever it happens.
     */
    projectRoot: z.string().min(1).optional(),
    /** Folders besides cwd the run may work in. */
    additionalDirectories: z.array(z.string().min(1)).optional(),
    /** How long one ask waits before its timeout behaviour (deny a permission, cancel a question), ms. */
    interactionTimeoutMs: z.number().int().nonnegative().optional(),
    executionTimeoutMs: z.number().int().positive().optional(),
    history: z.array(z.record(z.string(), z.unknown())).optional(),
    origin: originSchema.optional(),
    permissions: permissionsSchema.optional(),
    /** The tools by name (default: every built-in tool). */
    tools: z.array(z.string().min(1)).optional(),
    /** One task: the run ends with its final answer instead of waiting for a next message. */
    oneTask: z.boolean().optional(),
    /**
     * The run's MCP servers by name, as `.mcp.json` writes them (`${VAR}` unexpanded: read from the
     * environment of whichever process starts them), so a resumed run starts the same servers.
     * Validated in full by src/mcp when the run is built.
     */
    mcpServers: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    /** An external coding agent does the work instead of Sage's loop (src/agents); its calls pass this run's gate. */
    agent: agentSpecSchema.optional(),
    /** The action chain around the work: a setup script before it, a cleanup script after it. */
    chain: chainSpecSchema.optional(),
    /** Anything the caller wants back (labels, the web client's thread id). */
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export type StoredRunOptions = z.infer<typeof storedRunOptionsSchema>;
export type StoredRunOptionsInput = z.input<typeof storedRunOptionsSchema>;
export type RunSurface = (typeof RUN_SURFACES)[number];

export function parseStoredOptions(value: unknown, source = 'run options'): StoredRunOptions {
  const parsed = storedRunOptionsSchema.safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`${source}: ${formatZodError(parsed.error)}`);
  return parsed.data;
}
