import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ScratchEntry, SettingsJson } from './case-types.js';

/** Where a case runs: a scratch project, a fake home beside it, and a folder outside both. */
export interface Scratch {
  base: string;
  project: string;
  home: string;
  outside: string;
  settingsFile: string;
  remove(): void;
}

export const SETTINGS_FILE_NAME = 'differential-settings.json';

/**
 * The layout every case shares. Everything in it is fake: the "keys" are placeholder text, and
 * the whole tree lives in one temp folder that is removed afterwards. %O% is the outside folder.
 */
export const BASE_LAYOUT: readonly ScratchEntry[] = [
  { path: '%P%/README.md', content: '# scratch project\n' },
  { path: '%P%/package.json', content: '{"name":"scratch","version":"1.0.0","scripts":{"test":"echo ok"}}\n' },
  { path: '%P%/src/index.ts', content: 'export const a = 1;\n' },
  { path: '%P%/src/lib/util.ts', content: 'export const b = 2;\n' },
  { path: '%P%/docs/guide.md', content: 'guide\n' },
  { path: '%P%/.env', content: 'FAKE_SECRET=not-a-real-secret\n' },
  { path: '%P%/.env.example', content: 'FAKE_SECRET=\n' },
  { path: '%P%/config/.env', content: 'FAKE_NESTED_SECRET=not-real\n' },
  { path: '%P%/config/app.json', content: '{"debug":false}\n' },
  { path: '%P%/secrets/key.pem', content: 'FAKE KEY\n' },
  { path: '%P%/build/out.js', content: 'built\n' },
  { path: '%P%/.claude/notes.md', content: 'notes\n' },
  { path: '%P%/.sage/notes.md', content: 'notes\n' },
  { path: '%P%/.vscode/settings.json', content: '{}\n' },
  { path: '%P%/.bashrc', content: '# project rc\n' },
  { path: '%P%/notebook.ipynb', content: '{"cells":[],"metadata":{},"nbformat":4,"nbformat_minor":5}\n' },
  { path: '%P%/link-to-ssh', link: '%H%/.ssh' },
  { path: '%P%/link-to-key', link: '%H%/.ssh/id_rsa' },
  { path: '%P%/link-to-secrets', link: '%P%/secrets' },
  { path: '%P%/link-to-outside', link: '%O%/data.txt' },
  { path: '%P%/dangling-out', link: '%O%/missing/new.txt' },
  { path: '%P%/dangling-in', link: '%P%/missing-inside.txt' },
  { path: '%H%/.ssh/id_rsa', content: 'FAKE PRIVATE KEY (test fixture)\n' },
  { path: '%H%/.ssh/config', content: 'Host fake\n' },
  { path: '%H%/.bashrc', content: '# fake bashrc\n' },
  { path: '%H%/.zshrc', content: '# fake zshrc\n' },
  { path: '%H%/.aws/credentials', content: '[default]\naws_access_key_id=FAKE\n' },
  { path: '%H%/notes.txt', content: 'home notes\n' },
  { path: '%O%/data.txt', content: 'outside data\n' },
];

/** The git repositories (real ones: `git status` must work): the project and one outside it. */
const GIT_REPOS = ['%P%', '%O%/other-repo'];

export function substitute<T>(value: T, scratch: Pick<Scratch, 'project' | 'home' | 'outside'>): T {
  if (typeof value === 'string') {
    return value.replaceAll('%P%', scratch.project).replaceAll('%H%', scratch.home).replaceAll('%O%', scratch.outside) as T;
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, scratch)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, scratch)])) as T;
  }
  return value;
}

/** Builds a fresh scratch tree with the shared layout, the extra entries and the settings file. */
export function createScratch(settings: SettingsJson, extra: readonly ScratchEntry[] = []): Scratch {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'sage-ccdiff-')));
  const dirs = { project: path.join(base, 'proj'), home: path.join(base, 'home'), outside: path.join(base, 'outside') };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  for (const repo of GIT_REPOS) {
    const dir = substitute(repo, dirs);
    mkdirSync(dir, { recursive: true });
    // A real repository with no remote and no hooks: `git push` fails harmlessly if it runs.
    execFileSync('git', ['init', '-q', dir], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dirs.home } });
  }
  for (const entry of [...BASE_LAYOUT, ...extra]) writeEntry(substitute(entry, dirs));
  const settingsFile = path.join(dirs.project, SETTINGS_FILE_NAME);
  writeFileSync(settingsFile, JSON.stringify(substitute(settings, dirs), null, 2));
  return { base, ...dirs, settingsFile, remove: () => rmSync(base, { recursive: true, force: true }) };
}

function writeEntry(entry: ScratchEntry): void {
  mkdirSync(path.dirname(entry.path), { recursive: true });
  rmSync(entry.path, { recursive: true, force: true });
  if ('link' in entry) symlinkSync(entry.link, entry.path);
  else if ('dir' in entry) mkdirSync(entry.path, { recursive: true });
  else writeFileSync(entry.path, entry.content);
}
