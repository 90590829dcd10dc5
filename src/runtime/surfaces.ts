import type { RunSurface } from '../durable/stored-options.js';

/**
 * What differs between the places a run starts from, as data. Everything else about a run (its
 * factory, its store, its loop) is the same for all; code outside src/runtime asks this table
 * through the helpers below instead of testing a surface's name.
 */
export interface SurfaceRules {
  /**
   * The gate its runs get: `settings` (the run folder's settings files with folder trust, the run's
   * own rules) or `server` (the operator's policy and host settings first, then the client's lists).
   */
  gate: 'settings' | 'server';
  /** The store's channel column: where the run's asks reach people. */
  channel: string;
  /**
   * How a non-interactive run answers an ask when its request names no policy. Nobody is there to
   * be asked, so nothing is allowed that no one chose to allow: fail closed.
   */
  autoAnswer: 'deny';
  /** Where the model comes from: the person (flag, `model` setting, key), the server's run policy, the parent run. */
  model: 'person' | 'run policy' | 'parent';
  /** Whose settings files decide: the person's for the run's folder, or the host's (the server's). */
  settings: 'run folder' | 'host' | 'parent';
  /** Where its MCP servers come from: the person's config and `--mcp-config`, the host's, the parent's. */
  mcpServers: 'person' | 'host' | 'parent' | 'caller';
  /** Who the run belongs to. */
  identity: 'os user' | 'server user' | 'chat sender' | 'parent run' | 'caller';
  /** The checks made before such a run is stored (checkBeforeStart, src/runtime/admission-checks.ts). */
  checks: readonly AdmissionCheck[];
}

/**
 * A check made before a run is stored (src/runtime/admit-run.ts):
 * - `settings`: the run folder's settings files load with the run's own rules (fail closed, said here);
 * - `host settings`: the host's settings files for the folder load (fail closed, the operator's to fix);
 * - `agent`: an external agent can run here (its sandbox is available, unless it is off).
 */
export type AdmissionCheck = 'settings' | 'host settings' | 'agent';

export const SURFACES: Readonly<Record<RunSurface, SurfaceRules>> = {
  terminal: {
    gate: 'settings',
    channel: 'cli',
    autoAnswer: 'deny',
    model: 'person',
    settings: 'run folder',
    mcpServers: 'person',
    identity: 'os user',
    checks: ['settings', 'agent'],
  },
  detached: {
    gate: 'settings',
    channel: 'cli',
    autoAnswer: 'deny',
    model: 'person',
    settings: 'run folder',
    mcpServers: 'person',
    identity: 'os user',
    checks: ['settings', 'agent'],
  },
  web: {
    gate: 'server',
    channel: 'web',
    autoAnswer: 'deny',
    model: 'run policy',
    settings: 'host',
    mcpServers: 'host',
    identity: 'server user',
    checks: ['host settings', 'agent'],
  },
  // A chat run is started by the server too (`sage serve` runs the channels): the web run's gate.
  chat: {
    gate: 'server',
    channel: 'chat',
    autoAnswer: 'deny',
    model: 'run policy',
    settings: 'host',
    mcpServers: 'host',
    identity: 'chat sender',
    checks: ['host settings', 'agent'],
  },
  // A subagent gets its root run's gate and model source (see rootSurfaceOf); these say what it inherits.
  subagent: {
    gate: 'settings',
    channel: 'subagent',
    autoAnswer: 'deny',
    model: 'parent',
    settings: 'parent',
    mcpServers: 'parent',
    identity: 'parent run',
    checks: [],
  },
  sdk: {
    gate: 'settings',
    channel: 'sdk',
    autoAnswer: 'deny',
    model: 'person',
    settings: 'run folder',
    mcpServers: 'caller',
    identity: 'caller',
    checks: [],
  },
};

/** The surface whose rules a child run follows: its root's (a subagent of a subagent is its root's too). */
export function rootSurfaceOf(surface: RunSurface, parentRoot?: Exclude<RunSurface, 'subagent'>): Exclude<RunSurface, 'subagent'> {
  if (parentRoot) return parentRoot;
  // A run that claims to be a subagent but names no root was started by a library caller.
  return surface === 'subagent' ? 'sdk' : surface;
}

/** Whether the runs of `surface` are gated by the server (its policy and the host's settings). */
export function isServerGated(surface: RunSurface): boolean {
  return SURFACES[surface].gate === 'server';
}

/** Whether a run of `surface` may use a model chosen by someone other than the server's run policy. */
export function choosesOwnModel(surface: RunSurface): boolean {
  return SURFACES[surface].model !== 'run policy';
}
