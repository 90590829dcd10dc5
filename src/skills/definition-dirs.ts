import { join, resolve } from 'node:path';
import { isFolderTrusted } from '../permission/trusted-folders.js';
import type { DefinitionScope } from './skill.js';

/** A folder where skills or agent files are looked for. */
export interface DefinitionDir {
  dir: string;
  scope: DefinitionScope;
  /** The person trusted the project folder (always true for the user's own folder). */
  trusted: boolean;
}

/**
 * The folders of `kind` (`skills`, `agents`), first one wins on a name clash: the project's
 * `.sage/`, Claude Code's `.claude/` in the project, then `~/.sage/` ($SAGE_HOME). A project's
 * folders are read only after the person trusted it (as its allow rules and hooks are): a cloned
 * repository must not bring instructions or agent types in unseen. `untrusted` lists what was
 * left out.
 */
export function definitionDirs(kind: 'skills' | 'agents', cwd: string, home: string): { dirs: DefinitionDir[]; untrusted: string[] } {
  const project = resolve(cwd);
  const user = join(home, '.sage', kind);
  const own = join(project, '.sage', kind);
  const claude = join(project, '.claude', kind);
  // The project may be the home folder itself: its `.sage/` is then read once, as the user's.
  const isHome = resolve(user) === resolve(own);
  const trusted = isHome || isFolderTrusted(home, project);
  const dirs: DefinitionDir[] = [];
  if (trusted && !isHome) dirs.push({ dir: own, scope: 'project', trusted });
  if (trusted) dirs.push({ dir: claude, scope: 'project', trusted });
  dirs.push({ dir: user, scope: 'user', trusted: true });
  return { dirs, untrusted: trusted ? [] : [own, claude] };
}
