import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { definitionDirs } from './definition-dirs.js';
import { isProblem, loadSkillFile } from './load-skill.js';
import type { DefinitionProblem, Skill } from './skill.js';

export interface SkillCatalog {
  /** By priority (highest first), then name. */
  skills: Skill[];
  /** Files not loaded, each with the field at fault. */
  problems: DefinitionProblem[];
  /** Folders not read because the project is not trusted. */
  untrusted: string[];
}

/** Finds `SKILL.md` in `<dir>/*` of each skills folder (see definitionDirs); a bad file is skipped. */
export function discoverSkills(cwd: string, home: string): SkillCatalog {
  const { dirs, untrusted } = definitionDirs('skills', cwd, home);
  const skills: Skill[] = [];
  const problems: DefinitionProblem[] = [];
  const seen = new Set<string>();
  for (const { dir, scope, trusted } of dirs) {
    if (!existsSync(dir)) continue;
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      problems.push({ file: dir, field: '(folder)', message: 'cannot be read' });
      continue;
    }
    for (const entry of entries) {
      const file = join(dir, entry, 'SKILL.md');
      if (!isDirectory(join(dir, entry)) || !existsSync(file)) continue;
      const loaded = loadSkillFile(file, scope, trusted);
      if (isProblem(loaded)) problems.push(loaded);
      else if (seen.has(loaded.name)) problems.push({ file, field: 'name', message: `"${loaded.name}" is already defined by an earlier folder; this one is ignored` });
      else {
        seen.add(loaded.name);
        skills.push(loaded);
      }
    }
  }
  skills.sort((a, b) => b.priority - a.priority || a.name.localeCompare(b.name));
  return { skills, problems, untrusted };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
