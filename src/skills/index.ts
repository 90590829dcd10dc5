// Skills: SKILL.md discovery (Sage's and Claude Code's front matter), the grants of an active
// skill, and the front-matter reader the agent files share.

// Discovery and the skill shape
export { discoverSkills, type SkillCatalog } from './discover-skills.js';
export { loadSkillFile, isProblem, MAX_SKILL_BYTES } from './load-skill.js';
export { SKILL_NAME, splitToolList, toolListSchema, type Skill, type DefinitionProblem, type DefinitionScope } from './skill.js';
export { definitionDirs, type DefinitionDir } from './definition-dirs.js';

// Active skills: their allowed tools, granted through the run's gate
export { ActiveSkills, withSkillGrants } from './active-skills.js';

// The Skill tool's loader (and the text `/name` shows the model)
export { createSkillLoader, skillMessage } from './skill-loader.js';

// The front matter of Markdown definitions (skills, agents)
export { parseFrontMatter, FrontMatterError, type FrontMatter } from './front-matter.js';
