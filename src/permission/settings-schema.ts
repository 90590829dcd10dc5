import { z } from 'zod';
import { permissionModeSchema } from './modes.js';

const ruleList = z.array(z.string({ error: 'each rule must be a string such as "Bash(npm run test *)"' }));

/**
 * A hook entry. Sage runs `command` hooks; other types Claude Code knows (`prompt`, `agent`, `http`…)
 * are accepted here so the rest of the file still loads, and the loader reports them as not run.
 */
const hookSchema = z.object({
  type: z.string({ error: 'each hook needs a type, such as "command"' }),
  command: z.string().optional(),
  /** Seconds. */
  timeout: z.number().positive().optional(),
}).loose();

const hookMatcherSchema = z.object({
  matcher: z.string().optional(),
  hooks: z.array(hookSchema),
});

/** The settings file schema (project, local, user and managed files share it). */
export const settingsFileSchema = z.object({
  permissions: z.object({
    allow: ruleList.optional(),
    ask: ruleList.optional(),
    deny: ruleList.optional(),
    defaultMode: permissionModeSchema.optional(),
    /** `"disable"`: bypassPermissions is never used; a request for it runs in default mode (Claude Code's key). */
    disableBypassPermissionsMode: z.literal('disable', { error: 'disableBypassPermissionsMode takes the value "disable"' }).optional(),
    additionalDirectories: z.array(z.string()).optional(),
  }).loose().optional(),
  approval: z.object({
    enabled: z.boolean().optional(),
    strictMode: z.boolean().optional(),
    toolOverrides: z.record(z.string(), z.boolean()).optional(),
    timeoutSeconds: z.number().positive().optional(),
    memoryWindowSeconds: z.number().positive().optional(),
  }).loose().optional(),
  hooks: z.object({
    PreToolUse: z.array(hookMatcherSchema).optional(),
    PostToolUse: z.array(hookMatcherSchema).optional(),
  }).loose().optional(),
  /** MCP servers by name, as in Claude Code's `.mcp.json`; src/mcp validates each entry (file and field in the error). */
  mcpServers: z.record(z.string(), z.unknown(), { error: 'mcpServers must be an object of servers by name' }).optional(),
  /** WebFetch's caps and WebSearch's backend; src/tool/builtin/web-fetch.ts validates them in full. */
  webFetch: z.record(z.string(), z.unknown()).optional(),
  webSearch: z.record(z.string(), z.unknown()).optional(),
}).loose();

export type SettingsFile = z.infer<typeof settingsFileSchema>;

export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 60;
export const DEFAULT_MEMORY_WINDOW_SECONDS = 300;
