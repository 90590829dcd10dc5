import { z } from 'zod';

/** Where a skill or an agent file was found: this project, or the user's home. */
export type DefinitionScope = 'project' | 'user';

/** A skill (SKILL.md): instructions the model loads with the Skill tool, or a person with `/name`. */
export interface Skill {
  name: string;
  description: string;
  whenToUse?: string;
  /** Tools the skill may use without asking while it is active (rules still deny first). */
  allowedTools: string[];
  userInvocable: boolean;
  /** Higher first in the system prompt's list. */
  priority: number;
  /** The instructions: the file's body. */
  instructions: string;
  file: string;
  scope: DefinitionScope;
  /** Project skills grant their allowed tools only in a folder the person trusted. */
  trusted: boolean;
}

/** One file that was not loaded, with the field at fault: reported, never fatal. */
export interface DefinitionProblem {
  file: string;
  field: string;
  message: string;
}

/** A tool list as Claude Code writes it (`Read, Grep, Bash(git:*)`) or as a YAML list. */
export const toolListSchema = z.preprocess(
  (v) => (typeof v === 'string' ? splitToolList(v) : v),
  z.array(z.string().trim().min(1, 'a tool name is empty')),
);

/** Splits on commas outside parentheses: `Bash(git add, git commit)` stays one entry. */
export function splitToolList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      out.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) out.push(current.trim());
  return out.filter(Boolean);
}

export const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/**
 * The front matter of Sage's SKILL.md and of Claude Code's: both spellings of each field
 * (`allowed_tools` / `allowed-tools`, `user_invocable` / `user-invocable`). Fields neither knows
 * (Claude Code's `argument-hint`, `model`) are ignored so such files load as they are.
 */
export const skillFrontMatterSchema = z
  .object({
    name: z.string().regex(SKILL_NAME, 'a name is 1-64 letters, digits, "_", ".", ":" or "-"').optional(),
    description: z.string().trim().min(1, 'a skill needs a description'),
    when_to_use: z.string().optional(),
    'when-to-use': z.string().optional(),
    allowed_tools: toolListSchema.optional(),
    'allowed-tools': toolListSchema.optional(),
    user_invocable: z.boolean().optional(),
    'user-invocable': z.boolean().optional(),
    priority: z.number().finite().optional(),
  })
  .passthrough();
