import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** The pinned Claude Code CLI (devDependency @anthropic-ai/claude-code): its native binary, or CLAUDE_BIN. */
export function claudeBinary(): string {
  if (process.env.CLAUDE_BIN) return process.env.CLAUDE_BIN;
  const candidates = [path.join(root, 'node_modules/@anthropic-ai/claude-code-linux-x64/claude'), path.join(root, 'node_modules/@anthropic-ai/claude-code/bin/claude.exe')];
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`Claude Code's binary is not installed (looked at ${candidates.join(', ')}); run npm ci, or set CLAUDE_BIN.`);
  return found;
}

/** What keeps the real CLI offline: no traffic but the fake model's. */
export const OFFLINE_ENV: Readonly<Record<string, string>> = Object.freeze({
  ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-offline-tests',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
  LANG: 'C.UTF-8',
});
