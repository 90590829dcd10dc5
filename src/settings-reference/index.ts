export { settingsDocumentSchema } from './settings-document.js';
export { SETTINGS_SCHEMA_PATH, settingsJsonSchema, settingsJsonSchemaText } from './json-schema.js';
export { settingsMarkdown } from './markdown.js';
