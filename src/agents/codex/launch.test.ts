import { describe, expect, test } from 'vitest';
import { parse } from 'smol-toml';
import { AgentConfigError } from '../errors.js';
import { sageCodexConfig } from './launch.js';

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
