import { startFakeAnthropic, type FakeProviderServer, type FakeReply, type RecordedRequest } from '../../src/testing/fake-providers/index.js';

/** What reached the model after a case's tool call: the tool_result block, as the next request carried it. */
export interface ToolResultSeen {
  isError: boolean;
  text: string;
}

/** The tool call a case makes, under the tool_use id the fake model gives it. */
export interface PlannedCall {
  toolUseId: string;
  name: string;
  input: Record<string, unknown>;
  /**
   * A Read of the same file played first: Claude Code refuses to Edit (or overwrite) a file that
   * was not read in the session, before it asks for permission, which would hide the decision.
   */
  readFirst?: { toolUseId: string; filePath: string };
}

export const CASE_MARKER = 'DIFFCASE';

/**
 * A fake Messages API that plays one tool_use per user turn: a user message `DIFFCASE <key>`
 * gets the planned call for that key; the request that carries its tool_result is recorded and
 * answered with a short text, which ends the turn. Anything else (a subagent's own request) gets
 * a plain text answer so nothing hangs.
 */
export class FakeModel {
  readonly results = new Map<string, ToolResultSeen>();
  private readonly afterRead = new Map<string, PlannedCall>();
  private constructor(
    readonly server: FakeProviderServer,
    private readonly calls: ReadonlyMap<string, PlannedCall>,
  ) {
    for (const call of calls.values()) if (call.readFirst) this.afterRead.set(call.readFirst.toolUseId, call);
  }

  static async start(calls: ReadonlyMap<string, PlannedCall>): Promise<FakeModel> {
    // The server needs the model to answer and the model needs the server: tie them through a holder.
    const holder: { model?: FakeModel } = {};
    const server = await startFakeAnthropic({ whenEmpty: (request) => holder.model!.answer(request) });
    holder.model = new FakeModel(server, calls);
    return holder.model;
  }

  /** For ANTHROPIC_BASE_URL: the server root (Claude Code appends /v1/messages). */
  get baseUrl(): string {
    return this.server.url.replace(/\/v1$/, '');
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(request: RecordedRequest): FakeReply {
    const messages = (request.body as { messages?: Array<{ role: string; content: unknown }> } | undefined)?.messages ?? [];
    const last = messages[messages.length - 1];
    if (!last || last.role !== 'user') return { text: 'ok' };
    const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : (last.content as Array<Record<string, unknown>>);
    const results = blocks.filter((b) => b.type === 'tool_result');
    if (results.length > 0) {
      let next: PlannedCall | undefined;
      for (const block of results) {
        this.results.set(String(block.tool_use_id), { isError: block.is_error === true, text: resultText(block.content) });
        next ??= this.afterRead.get(String(block.tool_use_id));
      }
      return next ? toolUse(next) : { text: 'DIFFDONE' };
    }
    for (const block of blocks) {
      if (block.type !== 'text' || typeof block.text !== 'string') continue;
      const match = new RegExp(`${CASE_MARKER} (\\S+)`).exec(block.text);
      const call = match ? this.calls.get(match[1]!) : undefined;
      if (call?.readFirst) return { toolCalls: [{ id: call.readFirst.toolUseId, name: 'Read', input: { file_path: call.readFirst.filePath } }] };
      if (call) return toolUse(call);
    }
    return { text: 'ok' };
  }
}

function toolUse(call: PlannedCall): FakeReply {
  return { toolCalls: [{ id: call.toolUseId, name: call.name, input: call.input }] };
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (typeof c?.text === 'string' ? c.text : '')).join('');
  return '';
}
