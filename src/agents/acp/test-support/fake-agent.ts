/**
 * A small ACP agent for tests, on the SDK's agent side, over stdio. It plays FAKE_ACP_PLAN (JSON):
 * a list of steps — ask a permission, read or write a file through the client, run a command in a
 * client terminal (with the environment and folder it names), say something — and ends its turn with `RESULTS <json>`: what each step got back
 * (the chosen option, the file content, the exit code, or the error), so a test can read what Sage
 * allowed, refused or asked.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { agent, ndJsonStream, PROTOCOL_VERSION, type CreateTerminalRequest } from '@agentclientprotocol/sdk';

type Step =
  /**
   * `announce: false` asks without a `tool_call` first, as Gemini CLI does for a call it confirms;
   * `result` is the text of the `tool_call_update` that ends an allowed call (`failed` when `fails`).
   */
  | { permission: { kind: string; title: string; rawInput?: Record<string, unknown>; path?: string; announce?: boolean; result?: string; fails?: boolean } }
  | { read: string }
  | { write: { path: string; content: string } }
  | { terminal: { command: string; args?: string[]; env?: Array<{ name: string; value: string }>; cwd?: string } }
  | { say: string }
  /** Like Gemini CLI's own read_file and shell: the agent touches the disk itself and only reports the call. */
  | { ownRead: string }
  | { ownWrite: { path: string; content: string } };

const plan = JSON.parse(process.env.FAKE_ACP_PLAN ?? '[]') as Step[];
let cancelled = false;

const app = agent({ name: 'fake-acp-agent' })
  .onRequest('initialize', () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: { loadSession: false } }))
  .onRequest('session/new', () => ({ sessionId: `fake_${process.pid}` }))
  .onNotification('session/cancel', () => {
    cancelled = true;
  })
  .onRequest('session/prompt', async ({ params, client }) => {
    const results: unknown[] = [];
    const say = (text: string) => client.notify('session/update', { sessionId: params.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });
    let n = 0;
    for (const step of plan) {
      if (cancelled) break;
      n++;
      try {
        if ('permission' in step) {
          const p = step.permission;
          const toolCallId = `call_${n}`;
          if (p.announce !== false) await client.notify('session/update', { sessionId: params.sessionId, update: { sessionUpdate: 'tool_call', toolCallId, title: p.title, kind: p.kind as never, status: 'pending', rawInput: p.rawInput ?? {}, ...(p.path ? { locations: [{ path: p.path }] } : {}) } });
          const answer = await client.request('session/request_permission', {
            sessionId: params.sessionId,
            toolCall: { toolCallId, title: p.title, kind: p.kind as never, rawInput: p.rawInput ?? {}, ...(p.path ? { locations: [{ path: p.path }] } : {}) },
            options: [
              { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
              { optionId: 'always', name: 'Always', kind: 'allow_always' },
              { optionId: 'no', name: 'Reject', kind: 'reject_once' },
            ],
          });
          const chosen = answer.outcome.outcome === 'selected' ? answer.outcome.optionId : 'cancelled';
          results.push({ permission: chosen });
          // A refused call ends failed, as Gemini CLI ends a call that threw.
          const ran = chosen === 'yes' || chosen === 'always';
          const status = ran && !p.fails ? 'completed' : 'failed';
          const text = ran ? (p.result ?? 'done') : 'Tool was canceled by the user.';
          // An allowed edit ends with a diff, as Gemini CLI's write_file does.
          const content = ran && p.kind === 'edit' && p.path ? [{ type: 'diff' as const, path: p.path, oldText: null, newText: text }] : [{ type: 'content' as const, content: { type: 'text' as const, text } }];
          await client.notify('session/update', { sessionId: params.sessionId, update: { sessionUpdate: 'tool_call_update', toolCallId, status, content } });
        } else if ('read' in step) {
          const r = await client.request('fs/read_text_file', { sessionId: params.sessionId, path: step.read });
          results.push({ read: r.content });
        } else if ('write' in step) {
          await client.request('fs/write_text_file', { sessionId: params.sessionId, path: step.write.path, content: step.write.content });
          results.push({ write: 'ok' });
        } else if ('terminal' in step) {
          const { command, args, env, cwd } = step.terminal;
          const create: CreateTerminalRequest = { sessionId: params.sessionId, command, args: args ?? [], env: env ?? [], cwd: cwd ?? null };
          const { terminalId } = await client.request('terminal/create', create);
          const exit = await client.request('terminal/wait_for_exit', { sessionId: params.sessionId, terminalId });
          const out = await client.request('terminal/output', { sessionId: params.sessionId, terminalId });
          await client.request('terminal/release', { sessionId: params.sessionId, terminalId });
          results.push({ exitCode: exit.exitCode ?? null, output: out.output });
        } else if ('ownRead' in step || 'ownWrite' in step) {
          const toolCallId = `own_${n}`;
          const path = 'ownRead' in step ? step.ownRead : step.ownWrite.path;
          await client.notify('session/update', { sessionId: params.sessionId, update: { sessionUpdate: 'tool_call', toolCallId, title: path, kind: 'ownRead' in step ? 'read' : 'edit', status: 'in_progress', locations: [{ path }] } });
          let text: string;
          let failed = false;
          try {
            if ('ownRead' in step) text = readFileSync(step.ownRead, 'utf8');
            else {
              writeFileSync(step.ownWrite.path, step.ownWrite.content);
              text = 'ok';
            }
            results.push('ownRead' in step ? { ownRead: text } : { ownWrite: text });
          } catch (error) {
            text = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
            results.push({ error: text });
            failed = true;
          }
          await client.notify('session/update', { sessionId: params.sessionId, update: { sessionUpdate: 'tool_call_update', toolCallId, status: failed ? 'failed' : 'completed', content: [{ type: 'content', content: { type: 'text', text } }] } });
        } else if ('say' in step) {
          await say(step.say);
        }
      } catch (error) {
        // The SDK rejects with the JSON-RPC error object: its code says what kind of refusal it was.
        const code = (error as { code?: unknown }).code;
        results.push({ error: (error as Error).message, ...(typeof code === 'number' ? { code } : {}) });
      }
    }
    if (cancelled) return { stopReason: 'cancelled' as const };
    await say(`RESULTS ${JSON.stringify(results)}`);
    return { stopReason: 'end_turn' as const };
  });

const stream = ndJsonStream(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>);
const connection = app.connect(stream);
await connection.closed;
