import type { DurableRunner, StartOptions } from '../durable/durable-runner.js';
import type { RunEvent } from '../events/index.js';
import { ActiveSkills, createSkillLoader, type Skill } from '../skills/index.js';
import { createSkillTool } from '../tool/builtin/skill.js';
import { createTaskTool } from '../tool/builtin/task.js';
import type { Tool } from '../tool/types.js';
import { createLauncher, type ChildRunInput, type ParentRun } from './launcher.js';
import { discoverSubagents, type SubagentCatalog } from './load-agent.js';

/** The tools a run gets from this module besides the built-ins, by name. */
export const AGENT_TOOL_NAMES = ['Task', 'Skill'] as const;

/** Deepest nesting allowed by SAGE_SUBAGENT_MAX_DEPTH (1, the default: subagents start none). */
export const MAX_SUBAGENT_DEPTH = 5;

export interface SubagentHostOptions {
  home: string;
  /** 1 (the default): only the main agent starts subagents. */
  maxDepth?: number;
  /** The factory's admitRun for a subagent's run. */
  newChild(child: ChildRunInput): Promise<StartOptions>;
}

/**
 * The part of the run factory that belongs to subagents and skills: the per-run Task and Skill
 * tools, the relay of a subagent's events into its parent's stream, and each run's active skills.
 * One per factory; what it holds per run is dropped when the run's loop ends here.
 */
export class SubagentHost {
  readonly maxDepth: number;
  private readonly relays = new Map<string, (event: RunEvent) => void>();
  private readonly active = new Map<string, ActiveSkills>();
  /** The skills each run's tools were built with (what `/name` may activate). */
  private readonly skills = new Map<string, readonly Skill[]>();
  /** Subagent runs driven here: their parent, and the runner that may resume it when they end. */
  private readonly parents = new Map<string, { parentRunId: string; runner: DurableRunner }>();

  constructor(private readonly options: SubagentHostOptions) {
    this.maxDepth = Math.min(MAX_SUBAGENT_DEPTH, Math.max(1, options.maxDepth ?? 1));
  }

  /** The skills active in a run (the Skill tool fills it; the run's gate reads it). */
  activeSkills(runId: string): ActiveSkills {
    let active = this.active.get(runId);
    if (!active) this.active.set(runId, (active = new ActiveSkills(this.options.home)));
    return active;
  }

  /**
   * The Task tool (when a runner drives the run: a subagent is a run of the same runner) and the
   * Skill tool (when there are skills), each only if `wanted` names it (undefined: all).
   */
  tools(parent: ParentRun, runner: DurableRunner | undefined, skills: readonly Skill[], wanted: readonly string[] | undefined): Tool[] {
    const out: Tool[] = [];
    this.skills.set(parent.record.id, skills);
    if (parent.subagent && runner) this.parents.set(parent.record.id, { parentRunId: parent.subagent.parentRunId, runner });
    if (runner && (!wanted || wanted.includes('Task'))) {
      let catalog: SubagentCatalog | undefined;
      const catalogOf = () => (catalog ??= discoverSubagents(parent.cwd, this.options.home));
      out.push(
        createTaskTool({
          types: catalogOf().agents,
          launch: createLauncher({ runner, parent, catalog: catalogOf, maxDepth: this.maxDepth, newChild: this.options.newChild, relays: this.relays }),
        }),
      );
    }
    if (skills.length > 0 && (!wanted || wanted.includes('Skill'))) out.push(createSkillTool({ load: createSkillLoader(() => skills, this.activeSkills(parent.record.id)) }));
    return out;
  }

  /**
   * This process's listener for a run's events: a subagent's go to its parent's Task call (which
   * relays them); a person's `/name` message activates that skill; a reply without tool calls ends
   * the turn and with it the active skills; the end of the loop here drops what is held for the run.
   */
  listener(runId: string, skills: () => readonly Skill[] = () => this.skills.get(runId) ?? []): (event: RunEvent) => void {
    return (event) => {
      this.relays.get(runId)?.(event);
      // A person's message that invokes a skill (`/name` in a session sends its instructions, see
      // skillMessage) makes it active like the Skill tool does. Only the run's own messages: the
      // task, or an answer to its next-message ask — never an event relayed from a subagent.
      const text = event.data.agent ? undefined : event.type === 'run.started' ? event.data.task : event.type === 'interaction.answered' ? event.data.response['text'] : undefined;
      const invoked = typeof text === 'string' ? /^<skill name="([^"]+)">\n/.exec(text)?.[1] : undefined;
      const skill = invoked ? skills().find((k) => k.name === invoked && k.userInvocable) : undefined;
      if (skill) this.activeSkills(runId).activate(skill);
      if (event.type === 'message.completed' && event.data.toolCalls.length === 0) this.active.get(runId)?.clear();
      if (event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.cancelled' || event.type === 'run.suspended') {
        this.active.delete(runId);
        this.skills.delete(runId);
        const parent = this.parents.get(runId);
        this.parents.delete(runId);
        if (parent && event.type !== 'run.suspended') setTimeout(() => void resumeWaitingParent(parent.runner, parent.parentRunId).catch(() => {}), 0);
      }
    };
  }
}

/**
 * A subagent ended here while its parent waits released in the store (its Task call suspended it:
 * the subagent's ask was answered later, through `sage respond` or a web page): resume the parent
 * now, in this process, so its Task call re-attaches and reads the outcome. Whatever prevents it (the
 * parent is live elsewhere, finished, or waits for an ask of its own) leaves it to recovery.
 */
async function resumeWaitingParent(runner: DurableRunner, parentRunId: string): Promise<void> {
  const parent = await runner.store.getRun(parentRunId);
  if (!parent || parent.status !== 'suspended' || parent.owner !== null || parent.pendingInteractionId !== null || runner.handle(parentRunId)) return;
  await runner.resume(parentRunId);
}
