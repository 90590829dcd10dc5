import type { SkillLoader } from '../tool/builtin/skill.js';
import type { ActiveSkills } from './active-skills.js';
import type { Skill } from './skill.js';

/** What the Skill tool (and `/name`) says when it loads a skill: its instructions and what it grants. */
export function skillMessage(skill: Skill, args: string | undefined, granted: boolean): string {
  const lines = [`<skill name="${skill.name}">`, skill.instructions || skill.description, '</skill>'];
  if (args?.trim()) lines.push(`Arguments: ${args.trim()}`);
  if (granted) lines.push(`While this skill is active (until your reply that ends this turn), these tools run without asking: ${skill.allowedTools.join(', ')}. Deny rules still apply.`);
  return lines.join('\n');
}

/** The Skill tool's loader for one run: finds the skill, activates its grants, returns its instructions. */
export function createSkillLoader(skills: () => readonly Skill[], active: ActiveSkills): SkillLoader {
  return (input) => {
    const all = skills();
    const skill = all.find((s) => s.name === input.skill) ?? all.find((s) => s.name.toLowerCase() === input.skill.toLowerCase());
    if (!skill) return { content: `There is no skill "${input.skill}". Skills: ${all.map((s) => s.name).join(', ') || '(none)'}.`, isError: true };
    active.activate(skill);
    return { content: skillMessage(skill, input.args, skill.trusted && skill.allowedTools.length > 0), data: { skill: skill.name, file: skill.file } };
  };
}
