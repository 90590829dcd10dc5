import { z } from 'zod';
import { formatZodError } from '../errors/format-zod-error.js';
import { UsageError } from './usage-error.js';

export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'] as const;

const positiveInt = (name: string) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= 100_000, `${name} must be between 1 and 100000`);

/** The flags of `sage run` (and `sage demo`), validated; every problem is a usage error. */
export const runFlagsSchema = z
  .object({
    model: z.string().min(1).optional(),
    baseUrl: z.string().url('--base-url must be a URL').optional(),
    cwd: z.string().min(1).optional(),
    permissionMode: z.enum(PERMISSION_MODES, { message: `--permission-mode must be one of ${PERMISSION_MODES.join(', ')}` }).optional(),
    maxSteps: positiveInt('--max-steps').optional(),
    interactionTimeout: positiveInt('--interaction-timeout').optional(),
    nonInteractive: z.boolean().default(false),
    auto: z.enum(['allow', 'deny'], { message: '--auto must be allow or deny' }).optional(),
    batch: z.boolean().default(false),
    json: z.boolean().default(false),
    verbose: z.boolean().default(false),
    expand: z.boolean().default(false),
    trajectory: z.string().min(1).optional(),
    allow: z.array(z.string()).default([]),
    ask: z.array(z.string()).default([]),
    deny: z.array(z.string()).default([]),
    ignoreBrokenSettings: z.boolean().default(false),
    detach: z.boolean().default(false),
    db: z.string().min(1).optional(),
    ephemeral: z.boolean().default(false),
    agent: z.string().min(1).optional(),
    agentCommand: z.string().min(1, '--agent-command is empty').optional(),
    agentEnv: z.array(z.string().min(1)).default([]),
    sandbox: z.enum(['on', 'off'], { message: '--sandbox must be on or off' }).optional(),
    continue: z.string().min(1).optional(),
    fork: z.string().min(1).optional(),
    setup: z.string().min(1, '--setup is empty').optional(),
    cleanup: z.string().min(1, '--cleanup is empty').optional(),
    /** `--mcp-config FILE` (repeatable): MCP servers in `.mcp.json`'s shape, for this run. */
    mcpConfig: z.array(z.string().min(1, '--mcp-config needs a file')).default([]),
  })
  .superRefine((flags, ctx) => {
    if (flags.batch && flags.nonInteractive) ctx.addIssue({ code: 'custom', message: '--batch and --non-interactive exclude each other: batch has no person at all' });
    if (flags.auto && !flags.nonInteractive) ctx.addIssue({ code: 'custom', message: '--auto needs --non-interactive' });
    if (flags.ephemeral && flags.db) ctx.addIssue({ code: 'custom', message: '--ephemeral and --db exclude each other: an ephemeral run is not stored' });
    if (flags.ephemeral && flags.detach) ctx.addIssue({ code: 'custom', message: '--ephemeral and --detach exclude each other: a detached run lives in the store' });
    if (flags.agentCommand && !flags.agent) ctx.addIssue({ code: 'custom', message: '--agent-command needs --agent (e.g. --agent acp --agent-command "my-agent --acp")' });
    if (flags.continue && flags.fork) ctx.addIssue({ code: 'custom', message: '--continue and --fork exclude each other: continue the session, or branch it' });
    if ((flags.continue || flags.fork) && flags.ephemeral) ctx.addIssue({ code: 'custom', message: '--continue and --fork read the earlier run from the store: not with --ephemeral' });
    if ((flags.continue || flags.fork) && flags.agentCommand) ctx.addIssue({ code: 'custom', message: '--continue and --fork use the command of the run they follow: drop --agent-command' });
    if (flags.sandbox && !flags.agent && !flags.continue && !flags.fork) ctx.addIssue({ code: 'custom', message: "--sandbox needs --agent: it is the external agent's OS sandbox" });
    if (flags.agent && flags.model) ctx.addIssue({ code: 'custom', message: "--agent and --model exclude each other: an external agent brings its own model (set it in the agent's own settings)" });
  });

export type RunFlags = z.infer<typeof runFlagsSchema>;

export function parseRunFlags(raw: Record<string, unknown>): RunFlags {
  const parsed = runFlagsSchema.safeParse(raw);
  if (!parsed.success) throw new UsageError(formatZodError(parsed.error).replace(/^\(root\): /, ''));
  return parsed.data;
}

/** Commander collects repeatable flags with this. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
