import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings, trustFolder } from '../permission/index.js';
import { checkSettings } from '../runtime/settings-check.js';
import { MCP_DEFAULT_CALL_TIMEOUT_MS } from '../mcp/connection.js';
import { DEFAULT_HOOK_TIMEOUT_MS } from '../permission/hooks.js';
import { DEFAULT_MEMORY_WINDOW_SECONDS } from '../permission/settings-schema.js';
import { SETTINGS_SCHEMA_PATH, settingsDocumentSchema, settingsJsonSchema, settingsJsonSchemaText, settingsMarkdown } from './index.js';

const repo = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(repo, file), 'utf8');

describe('the settings reference', () => {
  it('docs/settings.md is what npm run docs:settings writes from the schemas (regenerate it when this fails)', () => {
    expect(read('docs/settings.md')).toBe(settingsMarkdown());
  });

  it('the shipped JSON Schema is what npm run docs:settings writes (regenerate it when this fails)', () => {
    expect(read(SETTINGS_SCHEMA_PATH)).toBe(settingsJsonSchemaText());
  });

  it('ships the schema file in the npm package', () => {
    const pkg = JSON.parse(read('package.json')) as { files: string[] };
    expect(pkg.files.some((f) => SETTINGS_SCHEMA_PATH === f || SETTINGS_SCHEMA_PATH.startsWith(`${f}/`))).toBe(true);
  });

  it('documents every key with a description and gives the loader defaults', () => {
    const md = settingsMarkdown();
    for (const key of ['approval.strictMode', 'approval.toolOverrides', 'permissions.allow', 'permissions.defaultMode', 'hooks.PreToolUse[].matcher', 'mcpServers.<name>.command', 'agents.<name>.command', 'chain.setup', 'server.permissionModes', 'model']) {
      expect(md).toContain(`\`${key}\``);
    }
    const rows = md.split('\n').filter((l) => l.startsWith('| `'));
    expect(rows.filter((r) => r.trimEnd().endsWith('|  |'))).toEqual([]);
    const approval = (settingsJsonSchema().properties as Record<string, { properties: Record<string, { default?: unknown }> }>).approval!;
    expect(approval.properties.memoryWindowSeconds!.default).toBe(300);
  });

  it('documents the defaults the code uses', () => {
    const props = settingsJsonSchema().properties as Record<string, Record<string, unknown>>;
    const server = (props.mcpServers!.additionalProperties as { anyOf: Array<{ properties: { timeout: { default: number } } }> });
    expect(server.anyOf.map((b) => b.properties.timeout.default)).toEqual([MCP_DEFAULT_CALL_TIMEOUT_MS, MCP_DEFAULT_CALL_TIMEOUT_MS]);
    const approval = props.approval!.properties as Record<string, { default?: unknown }>;
    // No default: unset, an approval waits until it is answered.
    expect(approval.timeoutSeconds).toBeDefined();
    expect(approval.timeoutSeconds!.default).toBeUndefined();
    expect(approval.memoryWindowSeconds!.default).toBe(DEFAULT_MEMORY_WINDOW_SECONDS);
    const hook = JSON.stringify(props.hooks);
    expect(hook).toContain(`"default":${DEFAULT_HOOK_TIMEOUT_MS / 1000}`);
  });

  it('does not fill in defaults when a file is parsed, so precedence still sees what each file set', () => {
    expect(settingsDocumentSchema.parse({ approval: {} })).toEqual({ approval: {} });
  });
});

describe('a settings file with a $schema line', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('loads without a problem, in the project and the user file', async () => {
    const base = mkdtempSync(path.join(tmpdir(), 'sage-schema-'));
    dirs.push(base);
    const home = path.join(base, 'home');
    const project = path.join(base, 'project');
    const file = {
      $schema: `../node_modules/sage-agent/${SETTINGS_SCHEMA_PATH}`,
      permissions: { allow: ['Bash(npm test *)'], deny: ['Read(.env)'], defaultMode: 'acceptEdits' },
      approval: { strictMode: true, toolOverrides: { WebFetch: true } },
      model: 'anthropic:claude-sonnet-4-5',
      chain: { setup: 'npm ci' },
    };
    for (const dir of [path.join(project, '.sage'), path.join(home, '.sage')]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(file));
    }
    trustFolder(home, project);
    const settings = loadSettings({ projectRoot: project, home });
    expect(settings.problems).toEqual([]);
    expect(settings.defaultMode).toBe('acceptEdits');
    expect(settings.approval.strictMode).toBe(true);
    await expect(checkSettings({ allow: [], ask: [], deny: [] }, project, { report: false, home })).resolves.toBeUndefined();
    expect(settingsDocumentSchema.safeParse(file).success).toBe(true);
  });
});
