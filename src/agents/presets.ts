import { UnknownAgentError } from './errors.js';

/** How Sage talks to an agent's process. */
export type AgentProtocol = 'claude-code' | 'acp' | 'codex';

export interface AgentPreset {
  name: string;
  protocol: AgentProtocol;
  /** The default command line; empty for `acp`, which needs `--agent-command`. */
  command: readonly string[];
  /** The agent's own environment variables, passed through from Sage's environment by prefix. */
  envPrefixes: readonly string[];
  /**
   * Flags Sage sets itself, or that would let the agent approve its own calls or read what Sage has
   * not allowed: a command line holding one is refused (owned-flags.ts).
   */
  ownedFlags: readonly string[];
  /** The agent's own state under the home folder (its config, sessions, login): writable inside its sandbox. */
  stateInHome: readonly string[];
  description: string;
}

// Long flags only: a short one (`-y`, `-c`) is also a wrapper's (`npx -y`), and an agent given both
// its own and Sage's flag refuses to start (checked where the real program was at hand).
const GEMINI_OWNED_FLAGS = ['--yolo', '--approval-mode', '--allowed-tools', '--allowed-mcp-server-names', '--policy', '--admin-policy', '--skip-trust'];
const QWEN_OWNED_FLAGS = ['--yolo', '--approval-mode', '--allowed-tools', '--allowed-mcp-server-names'];
const CODEX_OWNED_FLAGS = ['--config', '--dangerously-bypass-approvals-and-sandbox', '--full-auto', '--ask-for-approval', '--sandbox', '--profile'];

/** The agents `sage run --agent NAME` knows. Each command can be overridden in settings (`agents.NAME.command`). */
export const AGENT_PRESETS: Readonly<Record<string, AgentPreset>> = Object.freeze({
  'claude-code': {
    name: 'claude-code',
    protocol: 'claude-code',
    command: ['claude'],
    envPrefixes: ['ANTHROPIC_', 'CLAUDE_'],
    ownedFlags: [
      '--permission-prompt-tool', '--permission-prompts', '--permission-mode', '--dangerously-skip-permissions', '--allow-dangerously-skip-permissions',
      '--allowedTools', '--allowed-tools', '--setting-sources', '--settings', '--strict-mcp-config', '--mcp-config', '--plugin-dir', '--plugin-url',
    ],
    stateInHome: ['.claude', '.claude.json'],
    description: "Anthropic's Claude Code over its stream-json control protocol; every tool call passes Sage's gate",
  },
  gemini: {
    name: 'gemini',
    protocol: 'acp',
    command: ['gemini', '--acp'],
    envPrefixes: ['GEMINI_', 'GOOGLE_'],
    ownedFlags: GEMINI_OWNED_FLAGS,
    stateInHome: ['.gemini'],
    description: 'Google Gemini CLI over the Agent Client Protocol',
  },
  qwen: {
    name: 'qwen',
    protocol: 'acp',
    command: ['qwen', '--acp'],
    envPrefixes: ['QWEN_', 'DASHSCOPE_', 'OPENAI_'],
    ownedFlags: QWEN_OWNED_FLAGS,
    stateInHome: ['.qwen'],
    description: 'Qwen Code over the Agent Client Protocol',
  },
  codex: {
    name: 'codex',
    protocol: 'codex',
    command: ['codex', 'app-server'],
    envPrefixes: ['OPENAI_', 'CODEX_'],
    ownedFlags: CODEX_OWNED_FLAGS,
    stateInHome: ['.codex'],
    description: 'OpenAI Codex over its app-server JSON-RPC protocol',
  },
  acp: {
    name: 'acp',
    protocol: 'acp',
    command: [],
    envPrefixes: [],
    ownedFlags: [],
    stateInHome: [],
    description: 'any Agent Client Protocol agent: give its command line with --agent-command',
  },
});

export function agentPreset(name: string): AgentPreset {
  const preset = Object.hasOwn(AGENT_PRESETS, name) ? AGENT_PRESETS[name] : undefined;
  if (!preset) throw new UnknownAgentError(`There is no agent called "${name}"; the agents are ${Object.keys(AGENT_PRESETS).join(', ')}.`);
  return preset;
}

/**
 * Splits a command line the way a shell would for plain words and quotes ("a b" and 'a b' are one
 * word, \\ escapes the next character), without running a shell: nothing is expanded.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new UnknownAgentError(`The agent command line has an unclosed ${quote} quote: ${line}`);
  if (inWord) words.push(word);
  return words;
}
