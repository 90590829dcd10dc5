/* global process */
// A fake `codex app-server` for tests: JSON-RPC over stdio, one object per line, no "jsonrpc" field
// (as Codex's). On turn/start it plays FAKE_CODEX_PLAN (JSON): approval requests for commands (in the
// folder a step names, else its own) and
// file changes (carrying them out only when accepted), a server request Sage does not handle, then
// says `RESULTS <json>` (each decision or error it got) and completes the turn.
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const plan = JSON.parse(process.env.FAKE_CODEX_PLAN ?? '[]');
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const waiting = new Map();
let next = 1000;
let interrupted = false;
const ask = (method, params) =>
  new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    send({ id, method, params });
  });

async function play(threadId, turnId, cwd) {
  const results = [];
  let n = 0;
  for (const step of plan) {
    if (interrupted) return;
    const itemId = `item_${++n}`;
    if (step.command) {
      const where = step.cwd ?? cwd;
      const answer = await ask('item/commandExecution/requestApproval', { threadId, turnId, itemId, command: step.command, cwd: where, reason: 'run it' });
      const decision = answer.result?.decision;
      results.push({ decision });
      if (decision === 'accept' || decision === 'acceptForSession') execSync(step.command, { cwd: where });
    } else if (step.fileChange) {
      send({ method: 'item/started', params: { threadId, turnId, item: { id: itemId, type: 'fileChange', changes: [{ path: step.fileChange.path, kind: 'add', diff: step.fileChange.content }] } } });
      const answer = await ask('item/fileChange/requestApproval', { threadId, turnId, itemId, reason: 'write it' });
      const decision = answer.result?.decision;
      results.push({ decision });
      if (decision === 'accept' || decision === 'acceptForSession') writeFileSync(step.fileChange.path, step.fileChange.content);
    } else if (step.mcpToolCall) {
      // As Codex 0.171.0 does: an MCP tool call runs without an approval request.
      const item = { id: itemId, type: 'mcpToolCall', server: step.mcpToolCall.server, tool: step.mcpToolCall.tool, arguments: step.mcpToolCall.arguments, status: 'inProgress', result: null, error: null };
      send({ method: 'item/started', params: { threadId, turnId, item } });
      const result = { content: [{ type: 'text', text: `Echo: ${step.mcpToolCall.arguments.message}` }] };
      send({ method: 'item/completed', params: { threadId, turnId, item: { ...item, status: 'completed', result, durationMs: 3 } } });
      results.push({ mcp: 'ran' });
    } else if (step.userInput) {
      const answer = await ask('item/tool/requestUserInput', { threadId, turnId, itemId, questions: [{ id: 'q', question: 'which?' }] });
      results.push(answer.error ? { error: answer.error.code } : { result: answer.result });
    }
  }
  if (interrupted) return;
  send({ method: 'item/agentMessage/delta', params: { threadId, turnId, itemId: 'msg', delta: `RESULTS ${JSON.stringify(results)}` } });
  send({ method: 'turn/completed', params: { threadId, turn: { id: turnId, status: 'completed' } } });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.method === undefined) {
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
    return;
  }
  switch (message.method) {
    case 'initialize':
      return send({ id: message.id, result: { userAgent: 'fake-codex/0' } });
    case 'initialized':
      return;
    case 'thread/start':
      return send({ id: message.id, result: { thread: { id: `thr_${process.pid}`, cwd: message.params.cwd } } });
    case 'thread/resume':
    case 'thread/fork':
      return send({ id: message.id, result: { thread: { id: message.params.threadId } } });
    case 'turn/start':
      send({ id: message.id, result: { turn: { id: 'turn_1' } } });
      void play(message.params.threadId, 'turn_1', process.cwd());
      return;
    case 'turn/interrupt':
      interrupted = true;
      send({ id: message.id, result: {} });
      send({ method: 'turn/completed', params: { threadId: message.params.threadId, turn: { id: message.params.turnId, status: 'interrupted' } } });
      return;
    default:
      return send({ id: message.id, error: { code: -32601, message: `unknown method ${message.method}` } });
  }
});
