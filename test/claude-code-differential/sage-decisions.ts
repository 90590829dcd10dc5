import { builtinToolInfo } from '../../src/permission/builtin-tool-traits.js';
import { createPermissionEngine } from '../../src/permission/engine.js';
import { loadSettings } from '../../src/permission/settings-loader.js';
import type { DifferentialCase } from './case-types.js';
import { createScratch, substitute } from './scratch-layout.js';

export type SageBehavior = 'allow' | 'ask' | 'deny';

export interface SageDecision {
  behavior: SageBehavior;
  reason: string;
}

/**
 * Sage's decision for each case of one group, in the same scratch layout Claude Code ran in, with
 * the engine built the way `sage permissions check --settings FILE` builds it.
 */
export async function sageDecisionsForGroup(cases: readonly DifferentialCase[]): Promise<Map<string, SageDecision>> {
  const first = cases[0];
  const out = new Map<string, SageDecision>();
  if (!first) return out;
  const scratch = createScratch(first.settings, first.files);
  try {
    const settings = loadSettings({ projectRoot: scratch.project, home: scratch.home, settingsFile: scratch.settingsFile, cli: { mode: first.mode } });
    const engine = createPermissionEngine({ home: scratch.home, projectRoot: scratch.project, settings, mode: first.mode });
    for (const c of cases) {
      const decision = await engine.decide(
        { toolCallId: c.id, toolName: c.tool, input: substitute(c.input, scratch), tool: builtinToolInfo(c.tool) },
        { runId: 'differential', sessionId: 'differential', userId: 'differential', channel: 'test', cwd: scratch.project },
      );
      const tool = builtinToolInfo(c.tool);
      // A tool that asks the person itself (AskUserQuestion) is Claude Code's "ask": its question is
      // the prompt. Sage lets such a tool run and the tool puts the question to the person, so an
      // allow here means a person is asked; anything else (deny in dontAsk) compares as it is.
      const behavior = decision.behavior === 'allow' && tool.requiresUserInteraction ? 'ask' : (decision.behavior as SageBehavior);
      out.set(c.id, { behavior, reason: behavior === decision.behavior ? decision.reason : `${decision.reason} (the tool itself asks the person: compared as ask)` });
    }
  } finally {
    scratch.remove();
  }
  return out;
}
