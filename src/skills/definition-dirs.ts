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
 * `.claude/` folder is read only after the person trusted the folder (as its settings are): a
 * cloned repository must not bring definitions in unseen. `untrusted` lists what was left out.
 */
export function definitionDirs(kind: 'skills' | 'agents', cwd: string, home: string): { dirs: DefinitionDir[]; untrusted: string[] } {
  const project = resolve(cwd);
  const trusted = isFolderTrusted(home, project);
  const claude = join(project, '.claude', kind);
  const dirs: DefinitionDir[] = [{ dir: join(project, '.sage', kind), scope: 'project', trusted }];
  if (trusted) dirs.push({ dir: claude, scope: 'project', trusted });
  const user = join(home, '.sage', kind);
  // The project may be the home folder itself: its `.sage/` is then read once, as the user's.
  if (resolve(user) !== resolve(dirs[0]!.dir)) dirs.push({ dir: user, scope: 'user', trusted: true });
  else dirs[0] = { dir: user, scope: 'user', trusted: true };
  return { dirs, untrusted: trusted ? [] : [claude] };
}
