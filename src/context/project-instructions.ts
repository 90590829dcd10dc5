import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { truncateToolResult } from './truncate-tool-result.js';

/** The files read, in this order. AGENTS.md is the cross-tool convention; SAGE.md is ours. */
export const PROJECT_INSTRUCTION_FILES = ['AGENTS.md', 'SAGE.md'] as const;

/** Instructions beyond this are cut with a note: they ride along in every request. */
const MAX_CHARS = 40_000;

export interface ProjectInstructions {
  /** The file name, relative to the project root. */
  file: string;
  content: string;
}

/**
 * Reads AGENTS.md and SAGE.md at the project root, when present. A missing file is normal; any
 * other read error (permissions, a directory by that name) is raised, since silently dropping
 * the project's rules would make the agent ignore them.
 */
export async function loadProjectInstructions(cwd: string, options: { maxChars?: number } = {}): Promise<ProjectInstructions[]> {
  const found: ProjectInstructions[] = [];
  for (const file of PROJECT_INSTRUCTION_FILES) {
    let content: string;
    try {
      content = await readFile(join(cwd, file), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    if (content.trim() === '') continue;
    found.push({ file, content: truncateToolResult(content.trim(), options.maxChars ?? MAX_CHARS, { hint: `Read ${file} for the rest.` }) });
  }
  return found;
}
