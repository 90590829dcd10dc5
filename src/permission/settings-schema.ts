import { z } from 'zod';
import { permissionModeSchema } from './modes.js';

/**
 * The descriptions here are the settings reference: `npm run docs:settings` writes them to
 * docs/settings.md and schema/settings.schema.json, and a test fails when those are stale.
 * `meta({ default })` documents the loader's default without making zod fill it in (a filled-in
 * value would hide that a lower-precedence file set it).
 */
const ruleList = z.array(z.string({ error: 'each rule must be a string such as "Bash(npm run test *)"' }));

/**
 * A hook entry. Sage runs `command` hooks; other types Claude Code knows (`prompt`, `agent`, `http`…)
 * are accepted here so the rest of the file still loads, and the loader reports them as not run.
 */
const hookSchema = z.object({
  type: z.string({ error: 'each hook needs a type, such as "command"' })
    .describe('"command" (the only type Sage runs; others Claude Code knows are reported as not run)'),
  command: z.string().optional()
    .describe('A shell command: reads the event as JSON on stdin; exit 2 blocks the call (stderr is the reason), '
      + 'exit 0 may print a JSON answer'),
  timeout: z.number().positive().optional().meta({ description: 'Seconds the hook may take', default: 60 }),
}).loose();

const hookMatcherSchema = z.object({
  matcher: z.string().optional()
    .describe('The tool names this entry applies to: a name, "A|B", a regular expression, or empty/"*" for every tool'),
  hooks: z.array(hookSchema).describe('The hooks to run, in order'),
});

/** The settings file schema (project, local, user and managed files share it). */
export const settingsFileSchema = z.object({
  $schema: z.string().optional()
    .describe('The JSON Schema this file follows, for editor completion; Sage ignores it'),
  permissions: z.object({
    allow: ruleList.optional()
      .describe('Rules whose calls run without asking, e.g. "Bash(npm test *)", "Read(src/**)". '
        + 'A project\'s own allow rules apply only once the folder is trusted (sage trust)'),
    ask: ruleList.optional()
      .describe('Rules whose calls always ask a person, even when an allow rule or mode would allow them'),
    deny: ruleList.optional()
      .describe('Rules whose calls are refused, whatever else says; they apply in untrusted folders too'),
    defaultMode: permissionModeSchema.optional()
      .meta({ description: 'The permission mode runs start in (--permission-mode overrides it)', default: 'default' }),
    disableBypassPermissionsMode: z
      .literal('disable', { error: 'disableBypassPermissionsMode takes the value "disable"' }).optional()
      .describe('"disable": bypassPermissions is never used; a request for it runs in default mode. '
        + 'Honoured from any file, since it only makes Sage stricter'),
    additionalDirectories: z.array(z.string()).optional()
      .describe('Folders besides the project that file tools may work in (relative to the file\'s project)'),
  }).loose().optional().describe('Permission rules in Claude Code\'s syntax, and the mode'),
  approval: z.object({
    enabled: z.boolean().optional()
      .meta({
        description: 'false: the gate asks no one: a call runs unless a deny rule stops it (a critical call still asks)',
        default: true,
      }),
    strictMode: z.boolean().optional()
      .meta({ description: 'true: approvals are never remembered; each call asks again, even the same one a moment later', default: false }),
    toolOverrides: z.record(z.string(), z.boolean()).optional()
      .describe('Per tool name, after rules and memory: true asks for every call of that tool, false runs it without '
        + 'asking (deny and ask rules still win), e.g. { "WebFetch": true, "Glob": false }'),
    timeoutSeconds: z.number().positive().optional()
      .describe('How long a run\'s approvals and questions wait for an answer; an unanswered approval is then '
        + 'denied (a question cancelled) and the run goes on. Unset: they wait until answered. --interaction-timeout (sage run) and '
        + 'the server\'s or channel\'s own timeout win over it; the managed file\'s value wins over the others'),
    memoryWindowSeconds: z.number().positive().optional()
      .meta({ description: 'How long an approved MEDIUM-risk call is remembered: the same call in the same session '
        + 'runs without asking again within this window', default: 300 }),
  }).loose().optional().describe('How the risk policy asks: applies only from trusted folders, user and managed files'),
  hooks: z.object({
    PreToolUse: z.array(hookMatcherSchema).optional()
      .describe('Commands run before a tool call: they may deny it, or allow what rules would ask about'),
    PostToolUse: z.array(hookMatcherSchema).optional()
      .describe('Commands run after a tool call, with its result'),
  }).loose().optional().describe('Claude Code\'s hooks; a project\'s run only once the folder is trusted'),
  mcpServers: z.record(z.string(), z.unknown(), { error: 'mcpServers must be an object of servers by name' }).optional()
    .describe('MCP servers by name, as in .mcp.json: { "command", "args", "env", "cwd", "timeout" } or '
      + '{ "type": "http", "url", "headers" }; tools are mcp__<server>__<tool>'),
  webFetch: z.record(z.string(), z.unknown()).optional().describe('Limits of the WebFetch tool'),
  webSearch: z.record(z.string(), z.unknown()).optional().describe('The backend of the WebSearch tool'),
}).loose();

export type SettingsFile = z.infer<typeof settingsFileSchema>;

export const DEFAULT_MEMORY_WINDOW_SECONDS = 300;
