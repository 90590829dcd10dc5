import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { CachedDecision, DifferentialCase } from './case-types.js';
import { CASE_MARKER, FakeModel, type PlannedCall } from './fake-model.js';
import { createScratch, substitute, type Scratch } from './scratch-layout.js';

/** The tools every process offers; `--tools` must name Glob and Grep or Claude Code hides them. */
export const OFFERED_TOOLS = ['Bash', 'Read', 'Edit', 'Write', 'Glob', 'Grep', 'NotebookEdit', 'WebFetch', 'AskUserQuestion', 'Agent', 'TodoWrite'];

const ASK_ANSWER = 'DIFFERENTIAL: asked, answered deny';
const CASE_TIMEOUT_MS = 90_000;
const READ_FIRST_SUFFIX = '_read';
const DEAD_PROXY = 'http://127.0.0.1:9';
const FAKE_MCP_SERVER = fileURLToPath(new URL('./fake-mcp-server.mjs', import.meta.url));

export function claudeBinary(repoRoot: string): string {
  if (process.env.CLAUDE_BIN) return process.env.CLAUDE_BIN;
  const candidates = [
    path.join(repoRoot, 'node_modules/@anthropic-ai/claude-code-linux-x64/claude'),
    path.join(repoRoot, 'node_modules/@anthropic-ai/claude-code/bin/claude.exe'),
  ];
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`Claude Code's binary is not installed (looked at ${candidates.join(', ')}); run npm ci, or set CLAUDE_BIN.`);
  return found;
}

interface WireEvents {
  asked: Set<string>;
  /** tool_result_meta.permission_decision per tool_use id, from the `user` lines on stdout. */
  meta: Map<string, Record<string, unknown>>;
  stderr: string;
}

/**
 * Runs one group of cases (same settings, mode and extra files) through one Claude Code process,
 * one user turn per case, and reads each decision off the wire. The process gets an environment
 * built from nothing but what it needs: a fake HOME and config dir, the loopback fake model, no
 * non-essential traffic.
 */
export async function runGroupInClaudeCode(cases: readonly DifferentialCase[], claudeBin: string): Promise<Map<string, CachedDecision>> {
  const first = cases[0];
  if (!first) return new Map();
  const scratch = createScratch(first.settings, first.files);
  const planned = new Map<string, PlannedCall>(cases.map((c, index) => [c.id, planCall(c, index, scratch)]));
  const model = await FakeModel.start(planned);
  const wire: WireEvents = { asked: new Set(), meta: new Map(), stderr: '' };
  const decisions = new Map<string, CachedDecision>();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: scratch.home,
    CLAUDE_CONFIG_DIR: path.join(scratch.home, '.claude'),
    ANTHROPIC_BASE_URL: model.baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-offline-tests',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    LANG: 'C.UTF-8',
    // An allowed `npx …`/`npm …` must never reach a registry: offline, and a dead loopback registry.
    npm_config_offline: 'true',
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_update_notifier: 'false',
    npm_config_cache: path.join(scratch.home, '.npm'),
    // Anything that would leave the machine (an allowed WebFetch, a preflight) meets a dead loopback
    // proxy instead; only the fake model is reached directly.
    HTTP_PROXY: DEAD_PROXY,
    HTTPS_PROXY: DEAD_PROXY,
    http_proxy: DEAD_PROXY,
    https_proxy: DEAD_PROXY,
    NO_PROXY: '127.0.0.1',
    no_proxy: '127.0.0.1',
    // Claude Code refuses bypassPermissions as root unless it is told it runs in a sandbox.
    ...(first.mode === 'bypassPermissions' ? { IS_SANDBOX: '1' } : {}),
  };
  const args = [
    '-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--verbose',
    '--permission-prompt-tool', 'stdio', '--model', 'claude-sonnet-4-5',
    '--settings', scratch.settingsFile, '--permission-mode', first.mode,
    '--tools', OFFERED_TOOLS.join(','), '--no-session-persistence',
    ...(first.mcp ? ['--mcp-config', JSON.stringify({ mcpServers: { fake: { command: process.execPath, args: [FAKE_MCP_SERVER] } } }), '--strict-mcp-config'] : []),
  ];
  const [command, commandArgs] = process.env.DIFFERENTIAL_STRACE
    ? ['strace', ['-f', '-e', 'trace=connect', '-o', process.env.DIFFERENTIAL_STRACE, claudeBin, ...args]]
    : [claudeBin, args];
  const child = spawn(command, commandArgs, { cwd: scratch.project, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.on('data', (chunk: Buffer) => { wire.stderr = (wire.stderr + chunk.toString()).slice(-4000); });
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  let turnEnded: (() => void) | undefined;
  let exited = false;
  const exitPromise = new Promise<void>((resolve) => child.on('close', () => { exited = true; turnEnded?.(); resolve(); }));

  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.type === 'control_request') {
      const request = message.request ?? {};
      if (request.subtype === 'can_use_tool' && String(request.tool_use_id).endsWith(READ_FIRST_SUFFIX)) {
        // The Read played before an Edit/Write is not a case: let it run so the edit reaches its own check.
        send({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: { behavior: 'allow', updatedInput: request.input } } });
      } else if (request.subtype === 'can_use_tool') {
        wire.asked.add(String(request.tool_use_id));
        send({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: { behavior: 'deny', message: ASK_ANSWER, interrupt: false } } });
      } else {
        send({ type: 'control_response', response: { subtype: 'error', request_id: message.request_id, error: 'unsupported by the differential driver' } });
      }
    } else if (message.type === 'user' && Array.isArray(message.tool_result_meta)) {
      for (const meta of message.tool_result_meta) wire.meta.set(String(meta.id), meta.permission_decision ?? {});
    } else if (message.type === 'result') {
      turnEnded?.();
    }
  });

  try {
    send({ type: 'control_request', request_id: 'diff_init', request: { subtype: 'initialize' } });
    for (const c of cases) {
      const call = planned.get(c.id)!;
      if (exited) {
        decisions.set(c.id, { decision: 'unknown', evidence: `Claude Code exited early: ${lastLine(wire.stderr)}` });
        continue;
      }
      const ended = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), CASE_TIMEOUT_MS);
        turnEnded = () => { clearTimeout(timer); resolve(true); };
      });
      send({ type: 'user', session_id: '', parent_tool_use_id: null, message: { role: 'user', content: [{ type: 'text', text: `${CASE_MARKER} ${c.id}` }] } });
      const ok = await ended;
      decisions.set(c.id, ok ? classify(call.toolUseId, wire, model, scratch.base) : { decision: 'unknown', evidence: 'no result within the time limit' });
    }
  } finally {
    child.stdin.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exitPromise;
    clearTimeout(killer);
    await model.close();
    scratch.remove();
  }
  return decisions;
}

const EDITING_TOOLS = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);

function planCall(c: DifferentialCase, index: number, scratch: Scratch): PlannedCall {
  const toolUseId = `toolu_diff_${String(index).padStart(4, '0')}`;
  const input = substitute(c.input, scratch);
  const filePath = input.file_path ?? input.notebook_path;
  const readFirst = EDITING_TOOLS.has(c.tool) && typeof filePath === 'string' && existsSync(filePath)
    ? { toolUseId: `${toolUseId}${READ_FIRST_SUFFIX}`, filePath }
    : undefined;
  return { toolUseId, name: c.tool, input, ...(readFirst ? { readFirst } : {}) };
}

/** Reads one decision off the wire: ask, deny by a rule or the mode, allow with the tool's real output, else unknown. */
function classify(toolUseId: string, wire: WireEvents, model: FakeModel, scratchBase: string): CachedDecision {
  const result = model.results.get(toolUseId);
  const meta = wire.meta.get(toolUseId);
  // Short and free of the temp folder's name, so the committed cache diffs cleanly between refreshes.
  const text = result?.text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '').replaceAll(scratchBase, '<scratch>').replace(/\s+/g, ' ').trim().slice(0, 140);
  const evidence = `meta=${JSON.stringify(meta ?? null)} result=${result ? `${result.isError ? 'error' : 'ok'}: ${text}` : 'none'}`;
  if (wire.asked.has(toolUseId)) {
    return result?.text.includes(ASK_ANSWER) ? { decision: 'ask', evidence } : { decision: 'unknown', evidence: `asked, but our denial did not reach the model; ${evidence}` };
  }
  if (!result) return { decision: 'unknown', evidence: `no tool_result reached the model; ${evidence}` };
  if (meta?.decision === 'reject' && result.isError) return { decision: 'deny', evidence };
  if (meta?.decision === 'accept') return { decision: 'allow', evidence };
  return { decision: 'unknown', evidence };
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? '';
}
