import type { GateCall, GateContext, PermissionDecision, PermissionGate } from './types.js';

/**
 * The simplest sound gate: a tool's own deny or ask stands, read-only tools and tools whose
 * execution is itself an interaction run, everything else asks a person.
 */
export const minimalGate: PermissionGate = {
  async decide(call: GateCall, ctx: GateContext): Promise<PermissionDecision> {
    const check = await call.tool.checkPermissions(call.input, ctx);
    if (check.behavior === 'deny') return { behavior: 'deny', reason: check.reason, source: 'tool' };
    if (check.behavior === 'ask') return { behavior: 'ask', reason: check.reason, source: 'tool', suggestions: check.suggestions };
    if (call.tool.requiresUserInteraction) return { behavior: 'allow', reason: `${call.toolName} asks the person itself.`, source: 'tool' };
    if (call.tool.readOnly) return { behavior: 'allow', reason: `${call.toolName} is read-only.`, source: 'default' };
    return { behavior: 'ask', reason: `${call.toolName} can change things; a person must approve it.`, source: 'default' };
  },
};

/** Allows every call (tests and benchmarks that measure the loop itself). */
export const allowAllGate: PermissionGate = {
  decide: () => ({ behavior: 'allow', reason: 'Every call is allowed by this gate.', source: 'default' }),
};
