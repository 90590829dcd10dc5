import { createPermissionEngine } from '../permission/engine.js';
import type { GateCall, GateContext, PermissionDecision, PermissionGate } from '../permission/types.js';
import type { Skill } from './skill.js';

interface Grant {
  skill: Skill;
  /** The skill's allowed tools as allow rules, matched with the permission engine's own matcher. */
  matcher: PermissionGate;
}

/**
 * The skills active in one run. A skill becomes active when the Skill tool (or `/name`) loads it
 * and stays active until the model's turn ends — its next reply without tool calls, which is where
 * the current user turn ends — or until the process driving the run lets it go (a resumed run
 * starts with no active skill and asks as usual: a grant never outlives what the person saw).
 */
export class ActiveSkills {
  private readonly grants = new Map<string, Grant>();

  constructor(private readonly home: string) {}

  activate(skill: Skill): void {
    // A project skill in a folder the person has not trusted is loaded for its instructions only.
    if (!skill.trusted || skill.allowedTools.length === 0) return;
    const matcher = createPermissionEngine({
      home: this.home,
      rules: skill.allowedTools.map((rule) => ({ rule, behavior: 'allow' as const, source: `skill:${skill.name}` })),
      knownTools: skill.allowedTools.map((t) => t.replace(/\(.*$/, '')),
    });
    this.grants.set(skill.name, { skill, matcher });
  }

  clear(): void {
    this.grants.clear();
  }

  names(): string[] {
    return [...this.grants.keys()];
  }

  /** The first active skill whose allowed tools cover the call (by an allow rule, nothing else). */
  async covering(call: GateCall, ctx: GateContext): Promise<{ skill: Skill; rule?: string } | undefined> {
    for (const grant of this.grants.values()) {
      const decision = await grant.matcher.decide(call, ctx);
      if (decision.behavior === 'allow' && decision.source === 'rule') return { skill: grant.skill, ...(decision.rule ? { rule: decision.rule } : {}) };
    }
    return undefined;
  }
}

/**
 * The run's gate with the grants of its active skills: a call the gate would ask a person about is
 * allowed when an active skill lists it in its allowed tools. Only such asks: a deny (rule, mode,
 * hook) stays a deny, an ask a rule or the tool insists on (an `ask` rule, a forced ask) stays an
 * ask, and an allow is untouched. Every other method of the gate (modes, answers, audit) is its own.
 */
export function withSkillGrants<G extends PermissionGate>(gate: G, active: ActiveSkills): G {
  const decide = async (call: GateCall, ctx: GateContext): Promise<PermissionDecision> => {
    const decision = await gate.decide(call, ctx);
    if (decision.behavior !== 'ask' || decision.forced || decision.source === 'rule' || decision.source === 'hook' || decision.source === 'tool') return decision;
    const cover = await active.covering(call, ctx);
    if (!cover) return decision;
    return {
      behavior: 'allow',
      reason: `allowed without asking while the skill "${cover.skill.name}" is active (its allowed tools)`,
      ...(cover.rule ? { rule: cover.rule } : {}),
      ruleSource: `skill:${cover.skill.name}`,
      source: 'rule',
      ...(decision.risk ? { risk: decision.risk } : {}),
      ...(decision.mode ? { mode: decision.mode } : {}),
    };
  };
  return new Proxy(gate, {
    get(target, prop, receiver) {
      if (prop === 'decide') return decide;
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
