import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { InteractionRecord, RunRecord, Store } from '../store/index.js';
import { subagentOf } from './subagent-of.js';
import { runSpecOf } from './run-spec.js';

/** Who is asking: the run's own agent, one of its subagents, or an external coding agent it drives. */
export const askerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('run') }),
  z.object({ kind: z.literal('subagent'), name: z.string() }),
  z.object({ kind: z.literal('agent'), name: z.string() }),
]);

/**
 * What a person needs beside an ask to judge it at a glance: which task it serves, in which folder,
 * who asks, how risky it is and the run's permission mode. Derived from the run and the request on
 * every read (never stored), so every surface shows the same words and old requests get them too.
 */
export const askContextSchema = z.object({
  /** The first line of the task the person gave (the root run's, for a subagent), clipped. */
  task: z.string(),
  /** The run's folder: `project/sub` when it lies in its project, else the path with `~` for home. */
  folder: z.string(),
  asker: askerSchema,
  risk: z.enum(['LOW', 'MEDIUM', 'HIGH', 'UNKNOWN']).optional(),
  /** The permission mode (`default`, `acceptEdits`, `plan`, …), with the automatic answer of a run nobody watches. */
  mode: z.string(),
});
export type AskContext = z.infer<typeof askContextSchema>;
export type Asker = z.infer<typeof askerSchema>;

/** What the context reads of an ask: its run and the request (a stored record, or one being delivered). */
export type AskedRequest = Pick<InteractionRecord, 'runId' | 'request'>;

const TASK_MAX = 80;

/** Names people know the external agents by. */
const AGENT_NAMES: Readonly<Record<string, string>> = {
  'claude-code': 'Claude Code',
  gemini: 'Gemini CLI',
  qwen: 'Qwen Code',
  codex: 'Codex',
  acp: 'ACP agent',
};

/** The first non-empty line of a task, clipped to a glance. */
export function taskLine(task: string): string {
  const line = task.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
  return line.length <= TASK_MAX ? line : `${line.slice(0, TASK_MAX - 1)}…`;
}

/** `project/sub` for a folder in its project; else the absolute path with the home folder as `~`. */
export function folderLabel(cwd: string, projectRoot: string | undefined, home = homedir()): string {
  const folder = path.resolve(cwd);
  if (projectRoot) {
    const root = path.resolve(projectRoot);
    const rel = path.relative(root, folder);
    // A project at `/` or the home folder itself names nothing a person would call a project.
    const named = root !== path.parse(root).root && root !== path.resolve(home);
    const inside = !rel.startsWith('..') && !path.isAbsolute(rel);
    if (named && inside) return rel ? `${path.basename(root)}/${rel}` : path.basename(root);
  }
  const rel = path.relative(home, folder);
  if (rel === '') return '~';
  return !rel.startsWith('..') && !path.isAbsolute(rel) ? `~/${rel}` : folder;
}

function riskOf(interaction: AskedRequest): AskContext['risk'] {
  const risk = interaction.request.metadata?.['risk'];
  return risk === 'LOW' || risk === 'MEDIUM' || risk === 'HIGH' || risk === 'UNKNOWN' ? risk : undefined;
}

/** What a stored run says of its folder and modes; a run whose options no longer validate still gets a context. */
function runFacts(run: RunRecord): { cwd?: string; projectRoot?: string; mode: string; agent?: string } {
  const raw = run.options;
  const autoResponse = typeof raw['autoResponse'] === 'string' ? raw['autoResponse'] : undefined;
  const auto =
    raw['mode'] === 'non-interactive' && autoResponse ? ` (--auto ${autoResponse})` : raw['mode'] === 'batch' ? ' (batch)' : '';
  // A web run keeps the client's mode with its lists in `metadata` (see web-gate.ts).
  const meta = raw['metadata'] as { permissionMode?: unknown } | undefined;
  const webMode = typeof meta?.permissionMode === 'string' ? meta.permissionMode : undefined;
  try {
    const spec = runSpecOf(run);
    const mode = `${spec.permissionMode ?? webMode ?? 'default'}${auto}`;
    return {
      cwd: spec.cwd,
      ...(spec.projectRoot ? { projectRoot: spec.projectRoot } : {}),
      mode,
      ...(spec.agent ? { agent: spec.agent.name } : {}),
    };
  } catch {
    return { ...(typeof raw['cwd'] === 'string' ? { cwd: raw['cwd'] } : {}), mode: `${webMode ?? 'default'}${auto}` };
  }
}

function askerOf(run: RunRecord, interaction: AskedRequest, agent: string | undefined): Asker {
  const requested = interaction.request.agent;
  if (requested !== undefined) {
    return { kind: 'subagent', name: typeof requested === 'string' ? requested : requested.type };
  }
  let sub: ReturnType<typeof subagentOf>;
  try {
    sub = subagentOf(run);
  } catch {
    sub = undefined;
  }
  if (sub) return { kind: 'subagent', name: sub.type };
  if (agent) return { kind: 'agent', name: AGENT_NAMES[agent] ?? agent };
  return { kind: 'run' };
}

/**
 * The context of an ask from its run (and, for a subagent's run, the root run whose task the
 * person gave: a subagent's own task is its parent model's prompt, text meant for a model).
 */
export function askContext(run: RunRecord, interaction: AskedRequest, root?: RunRecord): AskContext {
  const facts = runFacts(run);
  const risk = riskOf(interaction);
  return {
    task: taskLine((root ?? run).task),
    folder: facts.cwd ? folderLabel(facts.cwd, facts.projectRoot) : '',
    asker: askerOf(run, interaction, facts.agent),
    ...(risk ? { risk } : {}),
    mode: facts.mode,
  };
}

/** The root run a subagent's run belongs to, when it is one and the root is still stored. */
export async function rootRunOf(store: Pick<Store, 'getRun'>, run: RunRecord): Promise<RunRecord | undefined> {
  let meta: ReturnType<typeof subagentOf>;
  try {
    meta = subagentOf(run);
  } catch {
    return undefined;
  }
  if (!meta || meta.rootRunId === run.id) return undefined;
  return (await store.getRun(meta.rootRunId)) ?? undefined;
}

/** The context of one stored ask, reading its run (and root run) from the store; undefined without its run. */
export async function askContextFor(
  store: Pick<Store, 'getRun'>,
  interaction: AskedRequest,
  run?: RunRecord,
): Promise<AskContext | undefined> {
  const owner = run ?? (await store.getRun(interaction.runId)) ?? undefined;
  if (!owner) return undefined;
  return askContext(owner, interaction, await rootRunOf(store, owner));
}

/** Who asks, in a few words: `the run`, `subagent Explore`, `Claude Code`. */
export function askerText(asker: Asker): string {
  return asker.kind === 'run' ? 'the run' : asker.kind === 'subagent' ? `subagent ${asker.name}` : asker.name;
}

/** The context on one line, for a terminal or a chat message: `Fix add() · calc · subagent Explore · mode default`. */
export function askContextLine(context: AskContext, options: { risk?: boolean; taskMax?: number } = {}): string {
  const max = options.taskMax ?? TASK_MAX;
  const task = context.task.length <= max ? context.task : `${context.task.slice(0, max - 1)}…`;
  const parts = [
    task ? `“${task}”` : '',
    context.folder ? `in ${context.folder}` : '',
    `asked by ${askerText(context.asker)}`,
    options.risk && context.risk ? `${context.risk} risk` : '',
    `mode ${context.mode}`,
  ];
  return parts.filter(Boolean).join(' · ');
}
