import type { InteractionDraft, InteractionOutcome } from '../../../interaction/index.js';
import type { ToolContext } from '../../types.js';

/**
 * A ToolContext for tests of built-ins. Tools that ask a person are given `interact`; the others
 * get one that fails loudly, since a file tool asking a question would be a bug.
 */
export function createTestContext(overrides: Partial<ToolContext> & { cwd: string }): ToolContext {
  return {
    runId: 'run_test',
    sessionId: 'session_test',
    userId: 'user_test',
    toolCallId: 'call_test',
    signal: new AbortController().signal,
    runState: new Map(),
    interact(draft: InteractionDraft): Promise<InteractionOutcome> {
      return Promise.reject(new Error(`Unexpected interaction in a tool test: ${draft.title}`));
    },
    ...overrides,
  };
}
