import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { updateJsonFile } from './settings-writer.js';

/**
 * Folders a person has trusted, remembered per user in ~/.sage/trusted-folders.json. A repository's
 * own settings may only loosen permissions (allow rules, hooks, mode) once its folder is trusted.
 */
export function trustedFoldersFile(home: string): string {
  return path.join(home, '.sage', 'trusted-folders.json');
}

/**
 * Trust names a folder by its real path: trusting a symlink trusts the folder it points to then,
 * not whatever it is later pointed at. A path that does not resolve keeps its own spelling.
 */
function realPath(folder: string): string {
  const resolved = path.resolve(folder);
  try {
    return realpathSync(resolved);
  } catch {
    return resolved;
  }
}

/** Whether `folder` is trusted: its real path is listed, or (an entry written before trust named real paths) its path as given. */
export function isFolderTrusted(home: string, folder: string): boolean {
  const folders = listTrustedFolders(home);
  return folders.includes(realPath(folder)) || folders.includes(path.resolve(folder));
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

/** Takes back the trust of `folder`, by its real path and by its path as given; false when it was not trusted. */
export function untrustFolder(home: string, folder: string): boolean {
  const names = new Set([realPath(folder), path.resolve(folder)]);
  if (!listTrustedFolders(home).some((f) => names.has(f))) return false;
  updateJsonFile(trustedFoldersFile(home), (json) => {
    const folders = Array.isArray(json.folders) ? (json.folders as unknown[]) : [];
    json.folders = folders.filter((f) => typeof f !== 'string' || !names.has(f));
  });
  return true;
}

export function trustFolder(home: string, folder: string): void {
  updateJsonFile(trustedFoldersFile(home), (json) => {
    const folders = Array.isArray(json.folders) ? (json.folders as unknown[]) : [];
    const real = realPath(folder);
    if (!folders.includes(real)) folders.push(real);
    json.folders = folders;
  });
}

/** The command line that trusts `folder` (or takes its trust back), quoted for a POSIX shell: what a message tells a person to run. */
export function trustCommandFor(folder: string, options: { revoke?: boolean } = {}): string {
  const quoted = /^[\w@%+=:,./-]+$/.test(folder) ? folder : `'${folder.replaceAll("'", "'\\''")}'`;
  return `sage trust ${options.revoke ? '--revoke ' : ''}${quoted}`;
}
