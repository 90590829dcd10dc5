import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { addRuleToSettingsFile, createPermissionEngine, permissionModeSchema, rulesFromLists, settingsPaths, type PermissionEngine, type PermissionMode } from '../permission/index.js';
import type { RunRecord, Store } from '../store/index.js';
import { RunOptionsError } from './errors.js';
import type { RunRequest, ServerGrant } from './run-request.js';
import { ruleLists, runSpecOf, type RunRule, type RunSpec } from './run-spec.js';
import type { Role } from './principal.js';
import type { ServerPolicy } from './server-policy.js';
import { auditLogFromStore } from './store-adapters.js';
import { storeUserPermissions } from './user-permission-adapter.js';

/**
 * What runs stored before the server's grant was typed kept in `options.metadata`: the client's
 * lists and mode, the requester's role, the policy's lists when the run started. Still read, so
 * such a run resumes with the gate it started with.
 */
const storedMetadataSchema = z.object({
  permissionMode: permissionModeSchema.default('default'),
  allow: z.array(z.string()).default([]),
  ask: z.array(z.string()).default([]),
  deny: z.array(z.string()).default([]),
  role: z.enum(['user', 'admin']).default('user'),
  serverDeny: z.array(z.string()).default([]),
  serverAsk: z.array(z.string()).default([]),
});
type ServerGatedPermissions = z.infer<typeof storedMetadataSchema>;

/**
 * What a new server-gated run is admitted with: the client's mode and lists (rules of source
 * `request`), and the server's grant (who asked, the policy's lists now). They are stored typed
 * in its RunSpec, so whichever process resumes it (this server, another instance, `sage respond`)
 * builds the same gate; the policy's lists keep applying even where the server's flags are unknown.
 */
export function serverGatedRequest(
  request: { permissionMode: PermissionMode; allow?: readonly string[]; ask?: readonly string[]; deny?: readonly string[]; role: Role },
  policy: ServerPolicy,
): Pick<RunRequest, 'permissionMode' | 'rules' | 'server'> {
  const rules = (behavior: RunRule['behavior'], list: readonly string[] | undefined): RunRule[] => (list ?? []).map((rule) => ({ behavior, rule, source: REQUEST }));
  return {
    permissionMode: request.permissionMode,
    rules: [...rules('deny', request.deny), ...rules('ask', request.ask), ...rules('allow', request.allow)],
    server: serverGrant(request.role, policy),
  };
}

/** The server's grant for a run a `role` starts: the policy's deny and ask lists now. */
export function serverGrant(role: Role, policy: ServerPolicy): ServerGrant {
  return { role, deny: [...policy.deny], ask: [...policy.ask] };
}

/** The source of a web client's own rules. */
const REQUEST = 'request';

/** A server-gated run's permissions: typed in its RunSpec, or (stored before) in its metadata. */
function permissionsOf(run: RunRecord, spec: RunSpec): ServerGatedPermissions {
  if (spec.server) {
    const lists = ruleLists(spec.rules, REQUEST);
    return { permissionMode: spec.permissionMode ?? 'default', ...lists, role: spec.server.role, serverDeny: spec.server.deny, serverAsk: spec.server.ask };
  }
  const parsed = storedMetadataSchema.safeParse(run.options['metadata'] ?? {});
  if (!parsed.success) throw new RunOptionsError(run.id);
  return parsed.data;
}

/**
 * The gate of a web run, the same on start and on every resume: the server-wide deny and ask rules
 * (when the run started and now) and the host's settings come before the client's rules, and deny
 * wins over everything. The stored mode and allow rules are checked again against the current
 * policy. "Always" answers go to the run owner's per-user rules (or the session); only "always,
 * this project" is written to the folder's `.sage/settings.local.json`.
 */
export async function createWebGate(store: Store, run: RunRecord, options: { serverPolicy: ServerPolicy; home: string }): Promise<PermissionEngine> {
  const { serverPolicy, home } = options;
  const permissions = permissionsOf(run, runSpecOf(run));
  const { ask, deny, role, serverDeny, serverAsk } = permissions;
  const { mode, allow } = serverPolicy.currentFor(permissions, role);
  const current = new Set([...serverPolicy.deny, ...serverPolicy.ask]);
  const started = rulesFromLists({ deny: serverDeny.filter((r) => !current.has(r)), ask: serverAsk.filter((r) => !current.has(r)) }, 'server policy');
  const cwd = typeof run.options['cwd'] === 'string' ? run.options['cwd'] : undefined;
  const projectRoot = typeof run.options['projectRoot'] === 'string' ? run.options['projectRoot'] : undefined;
  const settings = cwd ? serverPolicy.settingsFor(cwd, projectRoot) : undefined;
  const engine = createPermissionEngine({
    mode,
    rules: [...serverPolicy.rules(), ...started, ...rulesFromLists({ deny, ask, allow }, 'request')],
    ...(settings ? { settings } : {}),
    home,
    ...(cwd ? { projectRoot: cwd } : {}),
    userStore: storeUserPermissions(store, { createdBy: (userId) => userId }),
    audit: auditLogFromStore(store),
    // "This project" (local) goes to the folder's .sage/settings.local.json (the server checked, before
    // the answer was claimed, that an admin gave it in a trusted folder); the rest to the owner's rules.
    persistRule: (rule, scope, ctx, answeredBy) => (scope === 'local' && cwd ? rememberForProject(engine, settingsPaths(cwd, home).local, rule) : rememberForUser(store, ctx.userId, rule, answeredBy ?? ctx.userId)),
  });
  await restoreSessionRules(store, engine, run);
  return engine;
}

/** Saved through the settings writer (atomic, keeps the file's other keys) and applied to this run at once. */
function rememberForProject(engine: PermissionEngine, file: string, rule: string): void {
  addRuleToSettingsFile(file, 'allow', rule);
  engine.addRule(rule, 'allow', { source: file });
}

/** An "always" answer becomes an allow rule of the run's owner; a deny of the same rule stays. */
async function rememberForUser(store: Store, userId: string, rule: string, createdBy: string): Promise<void> {
  const existing = await store.listUserPermissions(userId);
  if (existing.some((r) => r.rule === rule && r.behavior === 'deny')) return;
  await store.addUserPermission({ userId, rule, behavior: 'allow', createdBy });
}

/** A rule a run's gate added during the run: an "always, this run" answer to one of its approvals. */
export interface SessionRule {
  rule: string;
  toolName: string | null;
  interactionId: string;
  answeredBy: string | null;
  answeredAt: string | null;
}

/**
 * The session rules of a run as its store records them: the rules offered by its approvals that
 * were answered "always, this run". The engine keeps them only in the memory of the process driving
 * the run; this is what any process rebuilds them from.
 */
export async function sessionRulesOf(store: Store, runId: string): Promise<SessionRule[]> {
  // Only the answers that may remember a rule: a resume rebuilds the gate, and reading (and parsing)
  // every answer of the run grew with its length.
  const answered = await store.listInteractions({ runId, status: ['answered'], remembersForRun: true, limit: 1_000 });
  const rules: SessionRule[] = [];
  for (const record of answered) {
    const response = record.response;
    const request = record.request;
    if (!response || request.kind !== 'confirm' || response.kind !== 'confirm' || !response.confirmed || response.remember !== 'session') continue;
    // An edited input is approved once only, as the loop records it.
    if (response.updatedInput !== undefined && !isDeepStrictEqual(response.updatedInput, request.input)) continue;
    const offered = (request.suggestions ?? []).map((s) => s.rule);
    // Only what the request offered (an answer stored before rules were checked may name any rule).
    const picked = response.rule ? offered.filter((r) => r === response.rule) : offered;
    for (const rule of picked) rules.push({ rule, toolName: request.toolName ?? null, interactionId: record.id, answeredBy: record.answeredBy, answeredAt: record.answeredAt });
  }
  return rules;
}

/**
 * Session rules ("always" for this run) live in the engine; a resumed run gets a new engine, so
 * they are rebuilt from the run's answered approvals (already checked against their suggestions).
 */
export async function restoreSessionRules(store: Store, engine: PermissionEngine, run: RunRecord): Promise<void> {
  for (const { rule } of await sessionRulesOf(store, run.id)) {
    try {
      engine.addRule(rule, 'allow', { sessionId: run.sessionId, source: 'session' });
    } catch {
      // A rule that no longer compiles is not restored: the call is asked again.
    }
  }
}
