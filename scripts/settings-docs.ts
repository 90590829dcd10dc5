/**
 * `npm run docs:settings`: writes docs/settings.md and schema/settings.schema.json from the zod
 * schemas. `--check` writes nothing and exits 1 when either file differs (what the test checks).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTINGS_SCHEMA_PATH, settingsJsonSchemaText, settingsMarkdown } from '../src/settings-reference/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const files: Array<[string, string]> = [
  ['docs/settings.md', settingsMarkdown()],
  [SETTINGS_SCHEMA_PATH, settingsJsonSchemaText()],
];
const check = process.argv.includes('--check');
let stale = 0;
for (const [file, text] of files) {
  const target = join(root, file);
  let current: string | undefined;
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) {
    stale++;
    process.stderr.write(`${file} is stale: run npm run docs:settings\n`);
    continue;
  }
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, text);
  process.stdout.write(`wrote ${file}\n`);
}
process.exitCode = stale ? 1 : 0;
