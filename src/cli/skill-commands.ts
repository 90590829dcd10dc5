import { homedir } from 'node:os';
import { discoverSkills, skillMessage, type Skill } from '../skills/index.js';

/** The skills a person may invoke with `/name` in a session in `cwd`. */
export function invocableSkills(cwd: string): Skill[] {
  return discoverSkills(cwd, process.env.SAGE_HOME || homedir()).skills.filter((s) => s.userInvocable);
}

/**
 * `/name [args]` for a user-invocable skill: the message that invokes it (its instructions, which
 * the run recognises to make the skill active); undefined for anything else.
 */
export function skillCommand(text: string, skills: readonly Skill[]): string | undefined {
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  const skill = skills.find((s) => s.name === match[1]);
  return skill ? skillMessage(skill, match[2], skill.trusted && skill.allowedTools.length > 0) : undefined;
}
