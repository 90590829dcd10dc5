import { z } from 'zod';
import { toolListSchema, type DefinitionScope } from '../skills/index.js';

export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'] as const;
export type SubagentPermissionMode = (typeof PERMISSION_MODES)[number];

/**
 * Where a subagent works: the parent's folder (the default),
 * an explicit folder, or the process's own cwd. Either of the last two must lie inside the parent's
 * folders: a subagent narrows, it never reaches further than its parent.
 */
export type WorkingDirectory = { kind: 'inherited' } | { kind: 'explicit'; path: string } | { kind: 'process' };

/** A subagent type: a built-in one or an agent file. */
export interface SubagentDefinition {
  name: string;
  description: string;
  /** The tools it may use; undefined: the parent's. Always cut down to the parent's. */
  tools?: string[];
  /** A `provider:name` model spec; undefined (or `inherit`): the parent's model. */
  model?: string;
  /** Its own permission mode; the stricter of this and the parent's applies. */
  permissionMode?: SubagentPermissionMode;
  workingDirectory: WorkingDirectory;
  /** Its role: the opening of its system prompt. */
  prompt: string;
  source: 'builtin' | { file: string; scope: DefinitionScope };
}

const READ_ONLY_TOOLS = ['Read', 'Glob', 'Grep', 'Bash'];

/**
 * The built-in types, with Claude Code's names. Explore and Plan run in plan mode (only read-only
 * calls; a Bash command that changes something is refused by the gate's shell classifier), so
 * their Bash is read-only whatever the parent's mode allows.
 */
export const BUILTIN_SUBAGENTS: readonly SubagentDefinition[] = [
  {
    name: 'general-purpose',
    description: 'General-purpose agent for researching complex questions, searching for code and carrying out multi-step tasks. Has the same tools as you.',
    workingDirectory: { kind: 'inherited' },
    prompt: 'You are a subagent of Sage, given one task by the main agent. Do it with the tools you have, then answer with a concise report of what you found or did: your final message is all the main agent sees.',
    source: 'builtin',
  },
  {
    name: 'Explore',
    description: 'Fast read-only agent for exploring a codebase: finds files by pattern, searches code, reads files and answers questions about them. Cannot change anything.',
    tools: READ_ONLY_TOOLS,
    permissionMode: 'plan',
    workingDirectory: { kind: 'inherited' },
    prompt: 'You are an Explore subagent of Sage: you search and read, you never change anything (Read, Glob, Grep and read-only Bash). Answer the task with the facts you found, naming files and lines: your final message is all the main agent sees.',
    source: 'builtin',
  },
  {
    name: 'Plan',
    description: 'Read-only planning agent: studies the code and returns a step-by-step implementation plan. Changes nothing.',
    tools: READ_ONLY_TOOLS,
    permissionMode: 'plan',
    workingDirectory: { kind: 'inherited' },
    prompt: 'You are a Plan subagent of Sage: study the code with read-only tools and return a numbered implementation plan (files to change, steps, risks). You change nothing: your final message, the plan, is all the main agent sees.',
    source: 'builtin',
  },
];

export const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Claude Code's agent-file front matter (and Sage's `working_directory`). Unknown fields are ignored. */
export const agentFrontMatterSchema = z
  .object({
    name: z.string().regex(AGENT_NAME, 'a name is 1-64 letters, digits, "_", "." or "-"'),
    description: z.string().trim().min(1, 'an agent needs a description'),
    tools: toolListSchema.optional(),
    model: z.string().trim().min(1).optional(),
    permissionMode: z.enum(PERMISSION_MODES, { error: () => `a permission mode is one of ${PERMISSION_MODES.join(', ')}` }).optional(),
    /** `inherited` (default), `process`, or a folder inside the parent's. */
    working_directory: z.string().trim().min(1).optional(),
  })
  .passthrough();
