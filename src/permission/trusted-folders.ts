import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { updateJsonFile } from './settings-writer.js';

/**
 * Folders a person has trusted, remembered per user in ~/.sage/trusted-folders.json. A repository's
 * own settings may only loosen permissions (allow rules, hooks, mode) once its folder is trusted.
 */
export function trustedFoldersFile(home: string): string {
  return path.join(home, '.sage', 'trusted-folders.json');
}

export function isFolderTrusted(home: string, folder: string): boolean {
  const file = trustedFoldersFile(home);
  if (!existsSync(file)) return false;
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as { folders?: unknown };
    return Array.isArray(json.folders) && json.folders.includes(path.resolve(folder));
  } catch {
    // An unreadable trust file trusts nothing.
    return false;
  }
}

export function trustFolder(home: string, folder: string): void {
  updateJsonFile(trustedFoldersFile(home), (json) => {
    const folders = Array.isArray(json.folders) ? (json.folders as unknown[]) : [];
    const resolved = path.resolve(folder);
    if (!folders.includes(resolved)) folders.push(resolved);
    json.folders = folders;
  });
}
