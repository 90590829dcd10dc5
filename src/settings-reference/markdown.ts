import { SETTINGS_SCHEMA_PATH, settingsJsonSchema } from './json-schema.js';

interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

interface Row {
  key: string;
  type: string;
  default: string;
  description: string;
}

/** docs/settings.md: every key of a settings file, its type, default and meaning, from the schema. */
export function settingsMarkdown(): string {
  const schema = settingsJsonSchema() as JsonSchema;
  const out: string[] = [
    '# Settings reference',
    '',
    '<!-- Written by `npm run docs:settings` from the zod schemas (src/settings-reference); edit the',
    '     `.describe()` texts there, not this file. A test fails when this file is stale. -->',
    '',
    'Sage reads `~/.sage/settings.json` (user), `.sage/settings.json` (project, committed),',
    '`.sage/settings.local.json` (local, git-ignored) and the managed file (`SAGE_MANAGED_SETTINGS`).',
    'Scalars: managed > command line > local > project > user; rule lists merge across files. A',
    'project\'s own allow rules, hooks, mode, approval settings, MCP servers, agents and `model` apply only',
    'once the folder is trusted (`sage trust DIR`); its deny and ask rules apply at once.',
    '',
    `Editor completion: the package ships this schema as \`${SETTINGS_SCHEMA_PATH}\`; name it in a file with`,
    `\`"$schema": "../node_modules/sage-agent/${SETTINGS_SCHEMA_PATH}"\` (a path relative to the settings file, or a`,
    'URL that serves the file). Sage ignores the key.',
    '',
    '"—" in the default column: not set unless a file sets it.',
    '',
  ];
  for (const [name, section] of Object.entries(schema.properties ?? {})) {
    const [top, ...rows] = collect(name, section, []);
    out.push(`## \`${name}\``, '', `${text(top!.description)}.`, '', `Type: ${top!.type}. Default: ${top!.default}.`, '');
    if (rows.length === 0) continue;
    out.push('| key | type | default | meaning |', '|---|---|---|---|');
    for (const row of rows) out.push(`| \`${row.key}\` | ${cell(row.type)} | ${cell(row.default)} | ${cell(text(row.description))} |`);
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** The key itself, then each key beneath it: an object's properties, a record's entries, an array's items. */
function collect(key: string, node: JsonSchema, rows: Row[]): Row[] {
  rows.push({ key, type: typeOf(node), default: node.default === undefined ? '—' : `\`${JSON.stringify(node.default)}\``, description: node.description ?? '' });
  for (const [child, branch] of children(key, node)) collect(child, branch, rows);
  return rows;
}

function children(key: string, node: JsonSchema): Array<[string, JsonSchema]> {
  const found: Array<[string, JsonSchema]> = [];
  const seen = new Set<string>();
  const add = (child: string, branch: JsonSchema) => {
    if (seen.has(child)) return;
    seen.add(child);
    found.push([child, branch]);
  };
  const visit = (n: JsonSchema, prefix: string) => {
    for (const [name, branch] of Object.entries(n.properties ?? {})) add(`${prefix}.${name}`, branch);
    if (isObject(n.additionalProperties) && hasStructure(n.additionalProperties) && !n.properties) {
      for (const [child, branch] of children(`${prefix}.<name>`, n.additionalProperties)) add(child, branch);
    }
    if (n.items && hasStructure(n.items)) for (const [child, branch] of children(`${prefix}[]`, n.items)) add(child, branch);
    for (const branch of n.anyOf ?? []) visit(branch, prefix);
  };
  visit(node, key);
  return found;
}

function hasStructure(node: JsonSchema): boolean {
  return Boolean(node.properties) || Boolean(node.anyOf?.some((b) => b.properties));
}

function typeOf(node: JsonSchema): string {
  if (node.const !== undefined) return `\`${JSON.stringify(node.const)}\``;
  if (node.enum) return node.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' or ');
  if (node.anyOf) return node.anyOf.map(typeOf).join(' or ');
  const type = Array.isArray(node.type) ? node.type.join(' or ') : node.type;
  if (type === 'array') {
    const item = node.items ? typeOf(node.items) : 'any';
    return /^\w+$/.test(item) ? `${item}[]` : `list of ${item}`;
  }
  if (type === 'object') {
    if (node.properties) return 'object';
    const value = isObject(node.additionalProperties) ? node.additionalProperties : undefined;
    return value && (value.type || value.anyOf || value.properties) ? `{ [name]: ${hasStructure(value) ? 'object' : typeOf(value)} }` : 'object';
  }
  return type ?? 'any';
}

function cell(value: string): string {
  return value.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Prose from a description: `<name>` would read as an HTML tag in Markdown. */
function text(value: string): string {
  return value.replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null;
}
