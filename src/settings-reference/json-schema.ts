import { z } from 'zod';
import { settingsDocumentSchema } from './settings-document.js';

/** Where the schema file lives in the package, and so the `$schema` a settings file names. */
export const SETTINGS_SCHEMA_PATH = 'schema/settings.schema.json';

/** The JSON Schema of a settings file (what a file may hold, as written: defaults are not filled in). */
export function settingsJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(settingsDocumentSchema, { io: 'input', unrepresentable: 'any' });
  return {
    ...schema,
    title: 'Sage settings',
    description: 'A Sage settings file: ~/.sage/settings.json (user), .sage/settings.json (project), '
      + '.sage/settings.local.json (local) or the managed file (SAGE_MANAGED_SETTINGS).',
  };
}

/** The file's text, as written to disk (stable, so a test can compare it). */
export function settingsJsonSchemaText(): string {
  return `${JSON.stringify(settingsJsonSchema(), null, 2)}\n`;
}
