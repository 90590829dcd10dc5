import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinToolInfo } from '../builtin-tool-traits.js';
import type { GateCall, GateContext } from '../types.js';

/** A fresh temp folder with a project and a home inside (tests only). */
export function tempWorkspace(): { base: string; project: string; home: string } {
  const base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'sage-perm-')));
  return { base, project: path.join(base, 'proj'), home: path.join(base, 'home') };
}

export function gateCall(toolName: string, input: unknown, toolCallId = 'call-1'): GateCall {
  return { toolCallId, toolName, input, tool: builtinToolInfo(toolName) };
}

export function gateContext(cwd: string, overrides: Partial<GateContext> = {}): GateContext {
  return { runId: 'run-1', sessionId: 'session-1', userId: 'alice', channel: 'cli', cwd, ...overrides };
}
