import { describe, expect, test } from 'vitest';
import { agentMcpServers } from './agent-mcp.js';
import { AgentConfigError } from './errors.js';
import { refuseOwnedFlags } from './owned-flags.js';
import { agentPreset } from './presets.js';

describe('flags an operator or a person may not add to an agent\'s command', () => {
  test.each([
    ['claude-code', ['claude', '--dangerously-skip-permissions']],
    ['claude-code', ['claude', '--setting-sources=user,project,local']],
    ['claude-code', ['claude', '--settings', '{"hooks":{}}']],
    ['claude-code', ['claude', '--mcp-config', 'extra.json']],
    ['claude-code', ['claude', '--allowedTools', 'Bash']],
    ['claude-code', ['npx', '-y', '@anthropic-ai/claude-code', '--permission-mode=bypassPermissions']],
    ['gemini', ['gemini', '--acp', '--yolo']],
    ['gemini', ['gemini', '--acp', '--approval-mode=yolo']],
    ['gemini', ['gemini', '--acp', '--skip-trust']],
    ['qwen', ['qwen', '--acp', '--approval-mode', 'yolo']],
    ['codex', ['codex', 'app-server', '--config', 'approval_policy="never"']],
    ['codex', ['codex', 'app-server', '--dangerously-bypass-approvals-and-sandbox']],
  ])('%s %j is refused, naming the flag', (name, command) => {
    expect(() => refuseOwnedFlags(agentPreset(name), command)).toThrow(AgentConfigError);
  });

  test.each([
    ['claude-code', ['npx', '-y', '@anthropic-ai/claude-code@2.1.330', '--model', 'sonnet']],
    ['gemini', ['npx', '-y', '@google/gemini-cli', '--acp', '--model', 'gemini-2.5-pro']],
    ['acp', ['my-agent', '--yolo']],
  ])('%s %j is allowed', (name, command) => {
    expect(() => refuseOwnedFlags(agentPreset(name), command)).not.toThrow();
  });

  test('the program itself is not read as a flag', () => {
    expect(() => refuseOwnedFlags(agentPreset('claude-code'), ['--settings'])).not.toThrow();
  });
});

describe('the MCP servers an agent is given', () => {
  test('variables are read from Sage\'s environment; timeout and cwd are dropped; a bad entry is refused', () => {
    const servers = agentMcpServers({ files: { command: 'files-mcp', args: ['${ROOT:-/srv}'], env: { TOKEN: '${FILES_TOKEN}' }, cwd: 'tools', timeout: 5000 } }, { FILES_TOKEN: 'tok' });
    expect(servers).toEqual({ files: { command: 'files-mcp', args: ['/srv'], env: { TOKEN: 'tok' } } });
    expect(() => agentMcpServers({ files: { command: 'x', env: { TOKEN: '${UNSET_TOKEN}' } } }, {})).toThrow(/UNSET_TOKEN/);
    expect(() => agentMcpServers({ 'a__b': { command: 'x' } }, {})).toThrow(/server name/);
  });
});
