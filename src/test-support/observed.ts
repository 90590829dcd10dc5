/**
 * What a real-program suite saw the program do (its model-API requests, the calls Sage recorded),
 * written to test/agents/observed/<program>.json when SAGE_RECORD_OBSERVED is set — by
 * `npm run agents:refresh`, which diffs it against the committed one after a version bump.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedProgram, type PinnedProgram } from './real-agents.js';

const folder = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'agents', 'observed');

export function recordObserved(program: PinnedProgram, behaviours: Record<string, unknown>): void {
  if (!process.env['SAGE_RECORD_OBSERVED']) return;
  const { version } = pinnedProgram(program);
  const sorted = Object.fromEntries(Object.entries(behaviours).sort(([a], [b]) => a.localeCompare(b)));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, `${program}.json`), `${JSON.stringify({ program, version, behaviours: sorted }, null, 2)}\n`);
}

const ACP_METHODS: Array<[string, string]> = [['acp_read_', 'fs/read_text_file'], ['acp_write_', 'fs/write_text_file'], ['acp_term_', 'terminal/create']];

/**
 * An ACP agent's run as the ACP methods it used, from Sage's record of it: a permission request
 * (`session/request_permission`), a client request Sage served (`fs/*`, `terminal/create`, by the id
 * Sage gave the call), or a call the agent reported and ran itself (`tool_call`, ungated when the
 * gate never saw it).
 */
export function acpCalls(events: ReadonlyArray<{ type: string; data: Record<string, unknown> }>): string[] {
  const method = (id: unknown) => ACP_METHODS.find(([prefix]) => String(id).startsWith(prefix))?.[1];
  const calls: string[] = [];
  for (const event of events) {
    if (event.type === 'interaction.requested') {
      const request = event.data.request as { toolName?: string; toolCallId?: string };
      calls.push(`${method(request.toolCallId) ?? 'session/request_permission'} ${request.toolName ?? ''} (asked)`);
    } else if (event.type === 'tool.completed') {
      const served = method(event.data.toolCallId);
      calls.push(`${served ?? 'tool_call'} ${String(event.data.toolName)}${event.data.ungated ? ' (ungated: the agent\'s own)' : ''}${event.data.isError ? ' (error)' : ''}`);
    }
  }
  return calls;
}
