import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { styleText } from 'node:util';
import { loadSettings } from '../permission/index.js';

/**
 * The `model` setting, by precedence: managed > local > project > user. A project's own files
 * count only once the folder is trusted (a cloned repository should not pick the model that
 * receives your code and your key).
 */
export async function settingsModel(cwd: string): Promise<string | undefined> {
  const home = process.env.SAGE_HOME ?? homedir();
  const settings = loadSettings({ projectRoot: cwd, home });
  const order: Array<[string | undefined, boolean]> = [
    [settings.files.managed, true],
    [settings.files.local, settings.trusted],
    [settings.files.project, settings.trusted],
    [settings.files.user, true],
  ];
  for (const [file, applies] of order) {
    if (!file || !applies) continue;
    const model = readModel(file);
    if (model !== undefined) return model;
  }
  return undefined;
}

function readModel(file: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined; // a missing or malformed file is reported by the permission settings loader
  }
  const model = (json as { model?: unknown }).model;
  if (model === undefined) return undefined;
  if (typeof model !== 'string' || !model.includes(':')) {
    process.stderr.write(`${styleText('yellow', 'settings warning:')} ${file} model: must be a string like "anthropic:claude-sonnet-4-5"; ignored\n`);
    return undefined;
  }
  return model;
}
