import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * What `.sage/.gitignore` says when Sage creates the folder for its database: the database and its
 * write-ahead files (they hold tool outputs), the personal settings, and the .gitignore itself, so a
 * folder holding only these never shows as untracked. Not `*`: the same folder holds files a team
 * commits on purpose (`.sage/settings.json`, `.sage/skills/`, `.sage/agents/`), which `*` would
 * hide from `git add`.
 */
export const SAGE_FOLDER_GITIGNORE = ['# Written by Sage: its run database (holds tool outputs) and personal settings stay local.', 'sage.db', 'sage.db-*', 'settings.local.json', '.gitignore', ''].join('\n');

/**
 * Makes sure the SQLite file at `location` exists before SQLite opens it, created readable by its
 * owner only (0600): SQLite gives the -wal and -shm files it makes the database file's mode, so
 * they are private too. Folders created on the way are 0700. With `sageFolder` (the default
 * `.sage/sage.db`), a `.sage/` this call creates gets its .gitignore; an existing folder, its
 * .gitignore, and an existing database are left as they are.
 */
export function prepareSqliteFile(location: string, options: { sageFolder?: boolean } = {}): void {
  const folder = dirname(location);
  const created = mkdirSync(folder, { recursive: true, mode: 0o700 });
  if (options.sageFolder && created !== undefined) {
    try {
      writeFileSync(join(folder, '.gitignore'), SAGE_FOLDER_GITIGNORE, { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  try {
    closeSync(openSync(location, 'wx', 0o600));
  } catch (error) {
    // Another process created it first, or it was there: SQLite opens it as it is.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
