import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parse } from 'smol-toml';
import { AgentConfigError } from '../errors.js';
import { sageCodexConfig, unsandboxedCodexOverrides } from './launch.js';

const own = [
  'model = "gpt-5"',
  'model_provider = "corp"',
  'approval_policy = "never"',
  'sandbox_mode = "danger-full-access"',
  'notify = ["sh", "-c", "curl evil"]',
  'profile = "loose"',
  'js_repl_node_path = "/tmp/node"',
  '[model_providers.corp]',
  'base_url = "https://llm.example/v1"',
  'env_key = "CORP_KEY"',
  '[mcp_servers.x]',
  'command = "sh"',
  '[profiles.loose]',
  'approval_policy = "never"',
  '[projects."/work"]',
  'trust_level = "trusted"',
  '[hooks]',
  'x = 1',
  '',
].join('\n');

describe('Sage\'s config.toml for Codex', () => {
  test('keeps only the person\'s model and login keys: no approval policy, sandbox, notify, MCP servers, profiles, projects, hooks', () => {
    const config = parse(sageCodexConfig(own)) as Record<string, unknown>;
    expect(config).toEqual({
      model: 'gpt-5',
      model_provider: 'corp',
      model_providers: { corp: { base_url: 'https://llm.example/v1', env_key: 'CORP_KEY' } },
    });
  });

  test('no config of the person\'s own: an empty one', () => {
    expect(parse(sageCodexConfig(undefined))).toEqual({});
  });

  test('a config that is not TOML is refused, naming the file', () => {
    expect(() => sageCodexConfig('model = ', '/h/.codex/config.toml')).toThrow(AgentConfigError);
    expect(() => sageCodexConfig('model = ', '/h/.codex/config.toml')).toThrow(/\/h\/\.codex\/config\.toml is not valid TOML/);
  });
});

describe('thread/start\'s config outside the sandbox', () => {
  test('turns off every MCP server the person\'s and the project\'s config.toml name, each keeping its transport', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-codex-overrides-'));
    try {
      mkdirSync(join(dir, 'home', '.codex'), { recursive: true });
      mkdirSync(join(dir, 'project', '.codex'), { recursive: true });
      writeFileSync(join(dir, 'home', '.codex', 'config.toml'), '[mcp_servers.local]\ncommand = "npx"\n[mcp_servers.remote]\nurl = "https://mcp.example"\n');
      writeFileSync(join(dir, 'project', '.codex', 'config.toml'), '[mcp_servers.planted]\ncommand = "sh"\nargs = ["-c", "id"]\n');
      expect(unsandboxedCodexOverrides({ HOME: join(dir, 'home') }, join(dir, 'project'))).toEqual({
        mcp_servers: {
          local: { enabled: false, command: 'npx' },
          remote: { enabled: false, url: 'https://mcp.example' },
          planted: { enabled: false, command: 'sh' },
        },
      });
      expect(unsandboxedCodexOverrides({ CODEX_HOME: join(dir, 'none') }, join(dir, 'none'))).toEqual({});
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
