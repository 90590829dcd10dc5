import { homedir, platform, userInfo } from 'node:os';
import { resolve } from 'node:path';
import type { DurableRuntime, LoopExtras } from '../durable/runtime.js';
import type { StartOptions } from '../durable/durable-runner.js';
import type { StoredRunOptionsInput } from '../durable/stored-options.js';
import type { InteractionResponder } from '../interaction/index.js';
import type { RunEvent } from '../events/index.js';
import type { Model } from '../model/types.js';
import type { PermissionGate } from '../permission/types.js';
import type { RunPolicy } from './run-policy.js';
import type { ServerPolicy } from './server-policy.js';
import type { RunRecord, Store } from '../store/index.js';
import type { Tool } from '../tool/types.js';
import type { RunRequest } from './run-request.js';
import { runSpecOf, type RunSpec, type RunSurface } from './run-spec.js';
import { findProjectRoot } from '../permission/project-folders.js';
import { createSettingsGate } from './settings-gate.js';
import type { DurableRunner } from '../durable/durable-runner.js';
import { ScriptedModel } from '../model/scripted-model.js';
import { discoverSkills, withSkillGrants, type Skill } from '../skills/index.js';
import { AGENT_TOOL_NAMES, SubagentHost, type ParentRun } from '../subagents/index.js';
import { subagentOf } from './subagent-of.js';
import { buildModel } from './build-model.js';
import { choosesOwnModel, isServerGated, rootSurfaceOf, SURFACES } from './surfaces.js';
import { McpRunTools } from '../mcp/run-tools.js';
import { TextPool } from '../text-pool/index.js';
import { buildSystemPrompt, createAutoCompaction, loadProjectInstructions } from '../context/index.js';
import { isFolderTrusted } from '../permission/trusted-folders.js';
import { loadSettings } from '../permission/index.js';
import { builtinTools } from '../tool/builtin/index.js';
import { resolveServerPolicy } from './server-policy.js';
import { checkSettings } from './settings-check.js';
import { createWebGate } from './web-gate.js';

/** A module loaded on first use, then kept (the same promise for every caller). */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}

// The agents' workers bring the ACP SDK: loaded by the first run with an external agent or a chain
// (see "Lazy loads" in ARCHITECTURE.md), then kept, so a rebuild does not resolve the module again.
const modules = {
  workers: once(() => import('../agents/workers.js')),
};

export type { RunRequest, ServerGrant } from './run-request.js';

export interface RunFactoryOptions {
  store: Store;
  /** `~` of rules, settings and trusted folders; default SAGE_HOME, then the OS home. */
  home?: string;
  /** The server's policies: a web run's gate (and its scripted-model folders) come from them. */
  server?: { policy: ServerPolicy; runPolicy?: RunPolicy };
  /** The tools every run may call; default the built-in tools. */
  tools?: () => readonly Tool[] | Promise<readonly Tool[]>;
  /** This process's --ignore-broken-settings. */
  ignoreBrokenSettings?: boolean;
  /** A person at this process's terminal, for the runs it drives in the foreground. */
  terminal?: {
    runId?: string;
    /** The model this process already built for its run (the CLI resolves it before storing anything). */
    model?: Model;
    responder?: InteractionResponder;
    askTrust?: (cwd: string, files: Record<string, string | undefined>) => Promise<boolean>;
    onEvent?: (event: RunEvent) => void;
    trajectoryPath?: string;
  };
}

/**
 * The one factory of runs: a RunSpec (stored with the run) becomes what the loop needs — the model
 * with recovery, the tools, the permission gate of its surface, the system prompt with the
 * project's instructions, auto-compaction. It is the DurableRuntime every surface hands its
 * DurableRunner: the foreground CLI, `sage` sessions, `--detach`, `sage runs …`, `sage respond`
 * and the server. A resumed run is rebuilt from its stored spec, so it gets the gate it started with.
 */
export interface RunFactory extends DurableRuntime {
  /**
   * Admits a new run: the options it is stored with (its RunSpec, with the system prompt of now),
   * for DurableRunner.start or enqueue. The one way in for every surface.
   */
  admitRun(request: RunRequest): Promise<StartOptions>;
}

export function createRunFactory(options: RunFactoryOptions): RunFactory {
  /**
   * One parse of a record's stored options per rebuild: the model, the tools, the gate and the
   * extras are each built from the same record object, and each read its spec (a zod parse). Keyed
   * by that object, so a record read again (the next resume) is parsed again.
   */
  const specs = new WeakMap<RunRecord, RunSpec>();
  const specOf = (run: RunRecord): RunSpec => {
    let spec = specs.get(run);
    if (!spec) specs.set(run, (spec = runSpecOf(run)));
    return spec;
  };
  const home = options.home ?? (process.env.SAGE_HOME || homedir());
  const { store } = options;
  let toolsPromise: Promise<readonly Tool[]> | undefined;
  const allTools = () => (toolsPromise ??= Promise.resolve(options.tools ? options.tools() : builtinTools()));
  /** The tools a spec names (default all); a name this process does not have stops the build. */
  const toolsOf = async (spec: RunSpec): Promise<readonly Tool[]> => {
    const all = await allTools();
    const names = spec.tools;
    if (!names) return all;
    const unknown = names.filter((n) => !all.some((t) => t.name === n));
    if (unknown.length) throw new Error(`tools: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a tool of this process`);
    return all.filter((t) => names.includes(t.name));
  };
  const forTerminal = (run: RunRecord) => options.terminal && (options.terminal.runId === undefined || options.terminal.runId === run.id) ? options.terminal : undefined;
  /** Subagents (src/subagents): the Task and Skill tools of each run, relays, active skills. */
  const subagents = new SubagentHost({
    home,
    maxDepth: Number(process.env.SAGE_SUBAGENT_MAX_DEPTH) || 1,
    newChild: (child) => factory.admitRun(child),
  });
  /** A subagent run of the terminal's run: its asks go to the same person, at this terminal. */
  const terminalOfSubagent = (run: RunRecord) => {
    const meta = subagentOf(run);
    return meta && options.terminal && (options.terminal.runId === undefined || options.terminal.runId === meta.rootRunId) ? options.terminal : undefined;
  };
  /** The MCP servers of the runs this process drives (src/mcp): started per run, stopped when it ends. */
  const mcp = new McpRunTools({
    report: (runId, notice) => {
      if (options.terminal && (options.terminal.runId === undefined || options.terminal.runId === runId)) process.stderr.write(`sage: ${notice.file}: ${notice.message}\n`);
    },
  });
  /** The run's tools: the built-ins it names, Task and Skill (made per run: they know the run), and its MCP servers' tools. */
  const runTools = async (run: RunRecord, runner: DurableRunner | undefined): Promise<readonly Tool[]> => {
    const spec = specOf(run);
    const isAgentTool = (n: string) => (AGENT_TOOL_NAMES as readonly string[]).includes(n) || n.startsWith('mcp__');
    // An external agent starts the run's MCP servers itself (src/agents); Sage's tools only judge its calls.
    const mcpTools = spec.agent ? [] : await mcp.tools(run.id, spec.mcpServers, spec.cwd, spec.tools);
    const base = [...(await toolsOf(spec.tools ? { ...spec, tools: spec.tools.filter((n) => !isAgentTool(n)) } : spec)), ...mcpTools];
    const skills = discoverSkills(spec.cwd, home).skills;
    const names = [...base.map((t) => t.name), ...(spec.tools ? spec.tools.filter((n) => isAgentTool(n) && !n.startsWith('mcp__')) : ['Task', ...(skills.length ? ['Skill'] : [])])];
    return [...base, ...subagents.tools(parentRunOf(run, spec, names), runner, skills, spec.tools)];
  };

  const factory: RunFactory = {
    async createModel(spec: string, run: RunRecord): Promise<Model> {
      const runSpec = specOf(run);
      // An external agent brings its own model: the loop's model slot only names it.
      if (runSpec.agent) return (await modules.workers()).agentModel(runSpec.agent.name);
      const meta = subagentOf(run);
      if (meta) {
        // A subagent's model passes its root run's policy; a scripted one plays `agents.<type>`.
        const model = await modelOf(spec, { ...runSpec, surface: meta.rootSurface }, options.server?.runPolicy);
        return model instanceof ScriptedModel ? model.forAgent(meta.type) : model;
      }
      // The terminal's own run, first built here: the model it already resolved (and checked).
      // Built from the spec only when the spec still names it (a resumed run always rebuilds).
      const prebuilt = forTerminal(run)?.model;
      if (prebuilt && spec === runSpec.model) return prebuilt;
      return modelOf(spec, runSpec, options.server?.runPolicy);
    },

    tools: (run: RunRecord, runner?: DurableRunner) => runTools(run, runner),

    async createGate(run: RunRecord): Promise<PermissionGate> {
      // The gate with the grants of the run's active skills (their allowed tools; a deny still wins).
      return withSkillGrants(await surfaceGate(run), subagents.activeSkills(run.id));
    },

    createResponder(run: RunRecord): InteractionResponder | undefined {
      return forTerminal(run)?.responder ?? terminalOfSubagent(run)?.responder;
    },

    async loopExtras(run: RunRecord, model: Model): Promise<LoopExtras> {
      const spec = specOf(run);
      const terminal = forTerminal(run);
      if (spec.agent || spec.chain) {
        const { runWorkerOf } = await modules.workers();
        // Trust is read as the agent starts: a folder distrusted since the run was stored gets none.
        const worker = runWorkerOf(spec, isFolderTrusted(home, spec.cwd));
        if (spec.agent) {
          // The agent has its own prompt and context handling: Sage adds neither.
          const onEvent = terminal?.onEvent;
          return {
            ...(worker ? { worker } : {}),
            // The agent's process cannot be stored: while it waits for a person, this process keeps it.
            holdWhileWaiting: true,
            askForNextMessage: false,
            ...(onEvent ? { onEvent } : {}),
            ...(terminal?.trajectoryPath ? { trajectoryPath: terminal.trajectoryPath } : {}),
          };
        }
        const own = await sageLoopExtras(run, spec, model, terminal);
        return { ...own, ...(worker ? { worker } : {}) };
      }
      return sageLoopExtras(run, spec, model, terminal);
    },

    admitRun: (request) => admitRun(request),
  };

  /** What Sage's own loop gets: the system prompt, the subagent's attribution, auto-compaction. */
  async function sageLoopExtras(run: RunRecord, spec: RunSpec, model: Model, terminal: ReturnType<typeof forTerminal>): Promise<LoopExtras> {
    const meta = subagentOf(run);
    const system = spec.system ?? (await systemPrompt(spec.cwd, await runTools(run, undefined)));
    const subagentListener = subagents.listener(run.id, () => discoverSkills(spec.cwd, home).skills);
    const mcpListener = spec.mcpServers ? mcp.listener(run.id) : undefined;
    const listener: (event: RunEvent) => void = mcpListener ? (event) => (subagentListener(event), mcpListener(event)) : subagentListener;
    const onEvent = terminal?.onEvent;
    const extras: LoopExtras = {
      ...(spec.system === undefined ? { system } : {}),
      ...(spec.oneTask ? { askForNextMessage: false } : {}),
      onEvent: onEvent ? (event) => (listener(event), onEvent(event)) : listener,
      ...(terminal?.trajectoryPath ? { trajectoryPath: terminal.trajectoryPath } : {}),
      ...(meta ? { agent: { id: run.id, type: meta.type } } : {}),
    };
    // Scripted models pick their turn by counting assistant messages, which a summary would change.
    if (model.id.startsWith('scripted:')) return extras;
    const compaction = createAutoCompaction({ model, system });
    return { ...extras, model: compaction.model, prepareMessages: compaction.prepareMessages };
  }

  async function admitRun(run: RunRequest): Promise<StartOptions> {
    const all = await allTools();
    const named = run.tools ? all.filter((t) => run.tools!.includes(t.name)) : all;
    // The prompt lists Task and Skill as the run will have them, and the skills by priority.
    const skills = discoverSkills(run.cwd, home).skills;
    const agentTools = agentToolSummaries(run.tools, skills.length > 0);
    const system = await systemPrompt(run.cwd, [...named, ...agentTools], { skills, ...(run.intro ? { intro: run.intro } : {}) });
    const projectRoot = resolve(run.projectRoot ?? findProjectRoot(run.cwd));
    const interactionTimeoutMs = run.interactionTimeoutMs ?? settingsTimeoutMs(run, projectRoot);
    const stored: StoredRunOptionsInput = {
      version: 2,
      model: run.model,
      ...(run.baseUrl ? { baseUrl: run.baseUrl } : {}),
      mode: run.mode ?? 'interactive',
      // Named when nobody answers: the request's choice, else the surface's (never allow unasked).
      ...(run.mode === 'non-interactive' ? { autoResponse: run.autoResponse ?? SURFACES[run.surface].autoAnswer } : {}),
      ...(run.maxSteps ? { maxSteps: run.maxSteps } : {}),
      system,
      cwd: resolve(run.cwd),
      projectRoot,
      ...(run.additionalDirectories?.length ? { additionalDirectories: run.additionalDirectories } : {}),
      ...(interactionTimeoutMs !== undefined ? { interactionTimeoutMs } : {}),
      ...(run.executionTimeoutMs ? { executionTimeoutMs: run.executionTimeoutMs } : {}),
      origin: { surface: run.surface, startedBy: run.principal ?? safeUser(), ...(run.parentRunId ? { parentRunId: run.parentRunId } : {}), ...(run.chat ? { channel: run.chat.channel, chatId: run.chat.chatId, ...(run.chat.threadId ? { threadId: run.chat.threadId } : {}) } : {}) },
      permissions: { ...(run.permissionMode ? { mode: run.permissionMode } : {}), rules: run.rules ?? [], ignoreBrokenSettings: run.ignoreBrokenSettings ?? false, ...(run.server ? { server: run.server } : {}) },
      ...(run.tools ? { tools: run.tools } : {}),
      ...(run.mcpServers && Object.keys(run.mcpServers).length ? { mcpServers: run.mcpServers } : {}),
      ...(run.oneTask ? { oneTask: true } : {}),
      ...(run.metadata ? { metadata: run.metadata } : {}),
      ...(run.agent ? { agent: run.agent } : {}),
      ...(run.chain && (run.chain.setup || run.chain.cleanup) ? { chain: run.chain } : {}),
    };
    return { ...stored, channel: channelOf(run.surface) };
  }

  /**
   * `approval.timeoutSeconds` of the settings the run's gate will read, for a run whose surface set
   * no timeout: the server's view of the host's settings for a server-gated run (none when the server
   * reads no settings), else the files of the run's folders (a project's only once it is trusted).
   * Stored with the run, so a resume keeps the timeout it started with.
   */
  function settingsTimeoutMs(run: RunRequest, projectRoot: string): number | undefined {
    const cwd = resolve(run.cwd);
    const serverGated = run.server !== undefined || isServerGated(run.surface);
    const policy = () => options.server?.policy ?? resolveServerPolicy({ env: { ...process.env, SAGE_HOME: home } });
    const settings = serverGated
      ? policy().settingsFor(cwd, projectRoot)
      : loadSettings({ projectRoot: cwd, home, upTo: projectRoot });
    const seconds = settings?.approval.timeoutSeconds;
    return seconds === undefined ? undefined : Math.ceil(seconds * 1000);
  }

  /** The permission gate of the run's surface; a subagent gets its root run's surface's gate. */
  async function surfaceGate(run: RunRecord): Promise<PermissionGate> {
    const spec = specOf(run);
    const terminal = forTerminal(run);
    const surface = subagentOf(run)?.rootSurface ?? spec.surface;
    if (isServerGated(surface)) {
      // A run started through the server keeps the server's gate wherever it is resumed (the
      // server, `sage respond`, `sage runs resume`): the host policy and settings first.
      const serverPolicy = options.server?.policy ?? resolveServerPolicy({ env: { ...process.env, SAGE_HOME: home } });
      // The host's settings files must load (their deny rules apply to web runs too): fail closed.
      if (serverPolicy.settings) await checkSettings({ allow: [], ask: [], deny: [], ignoreBrokenSettings: options.ignoreBrokenSettings === true }, spec.cwd, { report: false, home, ...(spec.projectRoot ? { upTo: spec.projectRoot } : {}) });
      // The shell grammar (WASM, megabytes of memory) is left to the first Bash decision, which loads it
      // (engine.decide), as for a run nobody answers at a terminal: no prompt is drawn in this
      // process, and a server whose runs run no command never pays for it.
      return createWebGate(store, run, { serverPolicy, home });
    }
    return createSettingsGate(spec, run, {
      store,
      home,
      ...(options.ignoreBrokenSettings ? { ignoreBrokenSettings: true } : {}),
      ...(terminal?.askTrust ? { askTrust: terminal.askTrust } : {}),
      report: terminal !== undefined,
      ...(terminal?.responder ? { prompts: true } : {}),
    });
  }

  return factory;
}

/** The store's channel column: where a run's asks reach people. */
function channelOf(surface: RunSurface): string {
  return SURFACES[surface].channel;
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'local';
  }
}

/** A run's model from its spec: the server's run policy where its surface takes the model from there. */
function modelOf(spec: string, runSpec: RunSpec, runPolicy: RunPolicy | undefined): Promise<Model> {
  return buildModel(spec, {
    ...(runSpec.baseUrl ? { baseUrl: runSpec.baseUrl } : {}),
    ...(runPolicy && !choosesOwnModel(runSpec.surface) ? { runPolicy } : {}),
  });
}

/**
 * Prompts built lately, each kept once: runs of one folder, day and tools get the same text, and a
 * live run holds its prompt (a large share of a waiting run's memory, bench/README.md), so a thousand waiting runs share one copy instead of holding a thousand. Oldest out first.
 */
const builtPrompts = new TextPool();

/** The system prompt (environment, AGENTS.md / SAGE.md, tools, skills) for a run in `cwd`. */
export async function systemPrompt(cwd: string, tools: ReadonlyArray<Pick<Tool, 'name' | 'description'>>, extra: { skills?: readonly Skill[]; intro?: string } = {}): Promise<string> {
  return builtPrompts.share(buildSystemPrompt({
    cwd,
    platform: platform(),
    date: new Date(),
    tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: {} })),
    ...(extra.skills?.length ? { skills: extra.skills.map((k) => ({ name: k.name, description: k.whenToUse ? `${k.description} (when: ${k.whenToUse})` : k.description })) } : {}),
    ...(extra.intro ? { intro: extra.intro } : {}),
    projectInstructions: await loadProjectInstructions(cwd),
  }));
}

/** Task and Skill as the system prompt lists them, for a run that will have them. */
function agentToolSummaries(names: readonly string[] | undefined, hasSkills: boolean): Array<Pick<Tool, 'name' | 'description'>> {
  const out: Array<Pick<Tool, 'name' | 'description'>> = [];
  if (!names || names.includes('Task')) out.push({ name: 'Task', description: 'Launch a subagent (Explore, Plan, general-purpose, or an agent file\'s type) for a self-contained task; it returns one final report.' });
  if (hasSkills && (!names || names.includes('Skill'))) out.push({ name: 'Skill', description: 'Load one of the skills listed below: returns its instructions.' });
  return out;
}

/** The parent run as the Task tool's launcher sees it. */
function parentRunOf(run: RunRecord, spec: RunSpec, tools: string[]): ParentRun {
  const autoResponse = run.options['autoResponse'];
  const meta = subagentOf(run);
  return {
    record: run,
    model: spec.model,
    ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}),
    cwd: spec.cwd,
    ...(spec.projectRoot ? { projectRoot: spec.projectRoot } : {}),
    additionalDirectories: spec.additionalDirectories,
    surface: spec.surface,
    rootSurface: meta?.rootSurface ?? rootSurfaceOf(spec.surface),
    // A model an agent file names is used only where the person chose the model, not the server's run policy.
    ownModel: choosesOwnModel(meta?.rootSurface ?? spec.surface),
    startedBy: spec.startedBy,
    ...(spec.permissionMode ? { permissionMode: spec.permissionMode } : {}),
    rules: spec.rules,
    ...(spec.server ? { server: spec.server } : {}),
    tools,
    mode: spec.mode,
    ...(autoResponse === 'allow' || autoResponse === 'deny' || autoResponse === 'default' ? { autoResponse } : {}),
    ...(spec.interactionTimeoutMs !== undefined ? { interactionTimeoutMs: spec.interactionTimeoutMs } : {}),
    ...(spec.maxSteps ? { maxSteps: spec.maxSteps } : {}),
    ...(spec.mcpServers ? { mcpServers: spec.mcpServers } : {}),
    ...(meta ? { subagent: meta } : {}),
  };
}
