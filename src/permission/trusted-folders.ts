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

/** The trusted folders, in the order they were trusted; an unreadable trust file lists none. */
export function listTrustedFolders(home: string): string[] {
  const file = trustedFoldersFile(home);
  if (!existsSync(file)) return [];
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as { folders?: unknown };
    return Array.isArray(json.folders) ? json.folders.filter((f): f is string => typeof f === 'string') : [];
  } catch {
    return [];
  }
}

/** Takes back the trust of `folder`; false when it was not trusted. */
export function untrustFolder(home: string, folder: string): boolean {
  const resolved = path.resolve(folder);
  if (!listTrustedFolders(home).includes(resolved)) return false;
  updateJsonFile(trustedFoldersFile(home), (json) => {
    const folders = Array.isArray(json.folders) ? (json.folders as unknown[]) : [];
    json.folders = folders.filter((f) => f !== resolved);
  });
  return true;
}

export function trustFolder(home: string, folder: string): void {
  updateJsonFile(trustedFoldersFile(home), (json) => {
    const folders = Array.isArray(json.folders) ? (json.folders as unknown[]) : [];
    const resolved = path.resolve(folder);
    if (!folders.includes(resolved)) folders.push(resolved);
    json.folders = folders;
  });
}

/** The command line that trusts `folder` (or takes its trust back), quoted for a POSIX shell: what a message tells a person to run. */
export function trustCommandFor(folder: string, options: { revoke?: boolean } = {}): string {
  const quoted = /^[\w@%+=:,./-]+$/.test(folder) ? folder : `'${folder.replaceAll("'", "'\\''")}'`;
  return `sage trust ${options.revoke ? '--revoke ' : ''}${quoted}`;
}
