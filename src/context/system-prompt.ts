import type { ToolSpec } from '../model/types.js';
import type { ProjectInstructions } from './project-instructions.js';

export interface SkillSummary {
  name: string;
  description: string;
  /** The skill's instructions, for an active skill; a listed skill has only its description. */
  instructions?: string;
}

export interface SystemPromptInput {
  cwd: string;
  /** `process.platform`, e.g. `linux`. */
  platform: string;
  date: Date;
  tools: readonly Pick<ToolSpec, 'name' | 'description'>[];
  skills?: readonly SkillSummary[];
  projectInstructions?: readonly ProjectInstructions[];
  /** Replaces the opening paragraph (a subagent's role). */
  intro?: string;
}

const DEFAULT_INTRO = `You are Sage, an agent that carries out tasks in a software project using the tools below. A person is in the loop: some tool calls need their approval, and you can ask them questions. Work step by step, check your results, and say plainly what you did and what is left.`;

/**
 * Assembles the system prompt: role, environment, tools, skills, the project's instructions.
 * Tool schemas travel separately in the request; here each tool gets one line so the model sees
 * the whole toolbox at a glance.
 *
 * @example
 * buildSystemPrompt({ cwd, platform: process.platform, date: new Date(), tools: registry.specs(),
 *   projectInstructions: await loadProjectInstructions(cwd) })
 */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const sections = [input.intro ?? DEFAULT_INTRO];
  sections.push(
    [
      '# Environment',
      `- Working directory (the project root): ${input.cwd}`,
      `- Platform: ${input.platform}`,
      `- Today's date: ${input.date.toISOString().slice(0, 10)}`,
      'Relative paths are relative to the working directory.',
    ].join('\n'),
  );
  if (input.tools.length > 0) {
    sections.push(['# Tools', ...input.tools.map((tool) => `- ${tool.name}: ${firstLine(tool.description)}`)].join('\n'));
  }
  const skills = input.skills ?? [];
  if (skills.length > 0) {
    const lines = ['# Skills'];
    for (const skill of skills) {
      lines.push(skill.instructions ? `## ${skill.name} (active)\n${skill.description}\n\n${skill.instructions.trim()}` : `- ${skill.name}: ${firstLine(skill.description)}`);
    }
    sections.push(lines.join('\n'));
  }
  for (const instructions of input.projectInstructions ?? []) {
    sections.push(`# Project instructions (${instructions.file})\nThe project's maintainers wrote these for agents working here; follow them.\n\n${instructions.content}`);
  }
  return sections.join('\n\n');
}

function firstLine(text: string): string {
  return text.trim().split('\n', 1)[0] ?? '';
}
