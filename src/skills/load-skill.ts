import { readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { FrontMatterError, parseFrontMatter } from './front-matter.js';
import { skillFrontMatterSchema, type DefinitionProblem, type DefinitionScope, type Skill } from './skill.js';

/** The largest SKILL.md read: instructions, not data. */
export const MAX_SKILL_BYTES = 256 * 1024;

/** Reads one SKILL.md; a problem names the file and the field instead of throwing. */
export function loadSkillFile(file: string, scope: DefinitionScope, trusted: boolean): Skill | DefinitionProblem {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return { file, field: '(file)', message: `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  if (text.length > MAX_SKILL_BYTES) return { file, field: '(file)', message: `is larger than ${MAX_SKILL_BYTES} bytes` };
  let fields: Record<string, unknown>;
  let body: string;
  try {
    ({ fields, body } = parseFrontMatter(text));
  } catch (error) {
    if (error instanceof FrontMatterError) return { file, field: '(front matter)', message: error.message };
    throw error;
  }
  const parsed = skillFrontMatterSchema.safeParse(fields);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { file, field: issue.path.map(String).join('.') || '(front matter)', message: issue.message };
  }
  const f = parsed.data;
  const allowed = f.allowed_tools ?? f['allowed-tools'] ?? [];
  const whenToUse = f.when_to_use ?? f['when-to-use'];
  return {
    // Claude Code names a skill after its folder when the front matter does not.
    name: f.name ?? basename(dirname(file)),
    description: f.description,
    ...(whenToUse ? { whenToUse } : {}),
    allowedTools: allowed,
    userInvocable: f.user_invocable ?? f['user-invocable'] ?? true,
    priority: f.priority ?? 0,
    instructions: body.trim(),
    file,
    scope,
    trusted,
  };
}

export function isProblem(value: Skill | DefinitionProblem | object): value is DefinitionProblem {
  return 'field' in value && 'message' in value;
}
