import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordedRequest } from '../../../testing/fake-providers/index.js';

/**
 * A scratch CODEX_HOME (`HOME/.codex`, the folder Codex keeps inside Sage's sandbox) whose config
 * points Codex at a loopback Responses API: no login, no network. `baseUrl` ends in `/v1`.
 */
export function codexHomeFor(home: string, baseUrl: string): string {
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      'model = "gpt-fake"',
      'model_provider = "fake"',
      '[model_providers.fake]',
      'name = "fake"',
      `base_url = "${baseUrl}"`,
      'wire_api = "responses"',
      'env_key = "OPENAI_API_KEY"',
      '',
    ].join('\n'),
  );
  return codexHome;
}

interface InputItem {
  type?: string;
  role?: string;
  call_id?: string;
  output?: unknown;
  content?: Array<{ type?: string; text?: string }>;
}

/** The `function_call_output`s after the last user message of a Responses request (optionally of one call). */
export function functionOutputs(request: RecordedRequest, callId?: string): string[] {
  const input = (Array.isArray(request.body?.input) ? request.body.input : []) as InputItem[];
  const lastUser = input.map((item) => item.role === 'user' && item.type === 'message').lastIndexOf(true);
  return input
    .slice(lastUser + 1)
    .filter((item) => item.type === 'function_call_output' && (callId === undefined || item.call_id === callId))
    .map((item) => (typeof item.output === 'string' ? item.output : JSON.stringify(item.output)));
}

/** The `PLAN:key` marker of the last user message: which plan the fake model plays. */
export function planMarker(request: RecordedRequest): string | undefined {
  const input = (Array.isArray(request.body?.input) ? request.body.input : []) as InputItem[];
  const user = input.filter((item) => item.role === 'user' && item.type === 'message').at(-1);
  const text = (user?.content ?? []).map((c) => c.text ?? '').join(' ');
  return /PLAN:(\w+)/.exec(text)?.[1];
}

type PinnedBin = 'codex' | 'server-everything';

/**
 * test/support/real-agents.ts `binForSuite` (the pinned program's bin; undefined when a local
 * machine lacks it, an error under CI). Loaded by URL: test/ lies outside this package's tsconfig.
 */
export async function pinnedBin(name: PinnedBin): Promise<string | undefined> {
  const module = (await import(new URL('../../../../test/support/real-agents.ts', import.meta.url).href)) as { binForSuite(name: PinnedBin): string | undefined };
  return module.binForSuite(name);
}
