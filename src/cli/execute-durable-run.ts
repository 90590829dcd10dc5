import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { RunOutcome } from '../loop/index.js';
import type { Model } from '../model/types.js';
import type { ExitCode } from './exit-codes.js';
import type { AgentRunParts } from './agent-run.js';
import { askTrust, canAsk, offerFolderTrust } from './folder-trust.js';
import { cliRunSpec } from './cli-run-spec.js';
import { exitCodeOf, terminalSide, type ExecuteRunInput } from './terminal-side.js';
import { checkDbPath } from './output-path.js';
import type { RunFlags } from './run-flags.js';
import { DurableRunner } from '../durable/durable-runner.js';
import { cliRuntime } from '../runtime/cli-runtime.js';
import { openSqliteStore, openStore } from '../store/open-store.js';
import { askContextFor } from '../runtime/ask-context.js';

/**
 * A lease a foreground run renews while its process lives. Short, so that after a kill -9 of the
 * terminal `sage runs recover` can take the run over within seconds; renewed every third of it.
 */
const FOREGROUND_LEASE_MS = 5_000;
/** A person is at the terminal: a waiting run is never released from memory while it is open. */
const NEVER_IDLE_MS = 2_147_483_647;

export interface DurableRunInput {
  task: string;
  flags: RunFlags;
  /** The model spec (`scripted:` paths are made absolute so any process can rebuild the run). */
  modelSpec: string;
  cwd: string;
  /** The model this process already built from `modelSpec` (checked before anything was stored). */
  model?: Model;
  session?: boolean;
  onCommand?: ExecuteRunInput['onCommand'];
  /** `--ephemeral` and `sage demo`: the same factory and runner over an in-memory store (nothing kept). */
  ephemeral?: boolean;
  /** An external agent and the action chain (src/cli/agent-run.ts). */
  agentParts?: AgentRunParts;
}

/**
 * `sage run` and `sage` sessions: the run is recorded in the store (`--db`, `SAGE_DATABASE_URL`,
 * else `.sage/sage.db` of the working directory) while the person answers here, in this process.
 * It is built by the run factory like every other run, so after a kill -9 `sage runs recover`
 * finishes it and `sage respond` answers what it was waiting for. `--ephemeral` takes the same path
 * over an in-memory SQLite store: the same gate, prompt and audit, only nothing outlives the process.
 */
export async function executeDurableRun(input: DurableRunInput): Promise<{ code: ExitCode; outcome: RunOutcome }> {
  const { flags, cwd } = input;
  if (flags.db) checkDbPath(flags.db);
  const side = await terminalSide(flags, input.onCommand);
  const store = input.ephemeral ? await openSqliteStore(':memory:') : await openStore({ ...(flags.db ? { db: flags.db } : {}), cwd: process.cwd() });
  side.ref.contextOf = async (request) => {
    return askContextFor(store, { runId: request.runId, request });
  };
  const runId = `run_${randomUUID()}`;
  const runtime = cliRuntime(store, {
    ...(flags.ignoreBrokenSettings ? { ignoreBrokenSettings: true } : {}),
    terminal: {
      runId,
      ...(input.model ? { model: input.model } : {}),
      ...(side.responder ? { responder: side.responder } : {}),
      ...(canAsk(flags) ? { askTrust } : {}),
      onEvent: side.onEvent,
      ...(flags.trajectory ? { trajectoryPath: flags.trajectory } : {}),
    },
  });
  const runner = new DurableRunner({ store, runtime, leaseMs: FOREGROUND_LEASE_MS, idleSuspendMs: NEVER_IDLE_MS });
  try {
    await runner.open();
    const model = input.modelSpec.startsWith('scripted:') ? `scripted:${resolve(input.modelSpec.slice('scripted:'.length))}` : input.modelSpec;
    const parts = input.agentParts;
    // A project's MCP servers are read into the RunSpec now: the trust question comes first (a
    // session has asked it already). A folder with allow rules or hooks is asked the same question.
    if (!input.session) await offerFolderTrust(flags, cwd);
    const spec = await runtime.admitRun({
      task: input.task,
      surface: 'terminal',
      model,
      oneTask: !input.session,
      ...cliRunSpec(flags, cwd),
      ...(parts?.agent ? { agent: parts.agent } : {}),
      ...(parts?.chain ? { chain: parts.chain } : {}),
    });
    const handle = await runner.start(input.task, { ...spec, runId });
    side.ref.run = handle.run;
    const outcome = await side.follow(handle.run, handle.outcome);
    return { code: exitCodeOf(outcome), outcome };
  } finally {
    await runner.close();
    await store.close();
  }
}
