import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isFolderTrusted, listTrustedFolders, trustCommandFor, trustedFoldersFile, trustFolder, untrustFolder } from './trusted-folders.js';

let home: string;
beforeEach(() => {
  home = realpathSync(mkdtempSync(path.join(tmpdir(), 'sage-trusted-folders-')));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('trusted folders', () => {
  it('lists trusted folders in the order they were trusted, each once', () => {
    expect(listTrustedFolders(home)).toEqual([]);
    trustFolder(home, '/work/a');
    trustFolder(home, '/work/b/');
    trustFolder(home, '/work/a');
    expect(listTrustedFolders(home)).toEqual(['/work/a', '/work/b']);
  });

  it('revoking takes back exactly that folder, not its parent or a folder whose name starts with it', () => {
    for (const f of ['/work/a', '/work/a/sub', '/work/ab']) trustFolder(home, f);
    expect(untrustFolder(home, '/work/a/')).toBe(true);
    expect(isFolderTrusted(home, '/work/a')).toBe(false);
    expect(listTrustedFolders(home)).toEqual(['/work/a/sub', '/work/ab']);
  });

  it('revoking a folder that was not trusted says so and leaves the file as it was', () => {
    trustFolder(home, '/work/a');
    const before = readFileSync(trustedFoldersFile(home), 'utf8');
    expect(untrustFolder(home, '/work/other')).toBe(false);
    expect(readFileSync(trustedFoldersFile(home), 'utf8')).toBe(before);
  });

  it('revoking resolves a relative path as trusting does', () => {
    trustFolder(home, path.resolve('rel-folder'));
    expect(untrustFolder(home, 'rel-folder')).toBe(true);
    expect(listTrustedFolders(home)).toEqual([]);
  });

  it('an unreadable trust file lists nothing and trusts nothing, and revoking does not overwrite it', () => {
    mkdirSync(path.dirname(trustedFoldersFile(home)), { recursive: true });
    writeFileSync(trustedFoldersFile(home), '{ not json');
    expect(listTrustedFolders(home)).toEqual([]);
    expect(untrustFolder(home, '/work/a')).toBe(false);
    expect(readFileSync(trustedFoldersFile(home), 'utf8')).toBe('{ not json');
  });

  it('lists only strings from a hand-edited file', () => {
    mkdirSync(path.dirname(trustedFoldersFile(home)), { recursive: true });
    writeFileSync(trustedFoldersFile(home), JSON.stringify({ folders: ['/work/a', 7, null, { x: 1 }] }));
    expect(listTrustedFolders(home)).toEqual(['/work/a']);
  });

  it('names the command that trusts a folder, quoted for a shell when the path needs it', () => {
    expect(trustCommandFor('/work/a')).toBe('sage trust /work/a');
    expect(trustCommandFor('/work/my dir')).toBe("sage trust '/work/my dir'");
    expect(trustCommandFor("/work/it's; rm -rf ~")).toBe("sage trust '/work/it'\\''s; rm -rf ~'");
    expect(trustCommandFor('/work/$(id)')).toBe("sage trust '/work/$(id)'");
    expect(trustCommandFor('/work/a', { revoke: true })).toBe('sage trust --revoke /work/a');
  });

  describe('symlinks', () => {
    let real: string;
    let other: string;
    let link: string;
    beforeEach(() => {
      real = path.join(home, 'real');
      other = path.join(home, 'other');
      link = path.join(home, 'link');
      mkdirSync(real);
      mkdirSync(other);
      symlinkSync(real, link);
    });

    it('trusting through a symlink trusts the folder it points to, under its real path', () => {
      trustFolder(home, link);
      expect(listTrustedFolders(home)).toEqual([real]);
      expect(isFolderTrusted(home, real)).toBe(true);
      expect(isFolderTrusted(home, link)).toBe(true);
    });

    it('a symlink pointed elsewhere after trusting it does not carry the trust to its new target', () => {
      trustFolder(home, link);
      unlinkSync(link);
      symlinkSync(other, link);
      expect(isFolderTrusted(home, link)).toBe(false);
      expect(isFolderTrusted(home, other)).toBe(false);
    });

    it('a symlink to a trusted folder is trusted (the same files), a sibling is not', () => {
      trustFolder(home, real);
      expect(isFolderTrusted(home, link)).toBe(true);
      expect(isFolderTrusted(home, other)).toBe(false);
    });

    it('revoking through a symlink takes back the real folder', () => {
      trustFolder(home, real);
      expect(untrustFolder(home, link)).toBe(true);
      expect(isFolderTrusted(home, real)).toBe(false);
    });
  });
});
