// The wire types the page shares with the server: events and interactions come from the same
// zod-derived definitions the server validates with.
export type { RunEvent, RunEventType } from '../../src/events/run-event.js';
export type { InteractionRequest, InteractionRequestOf, CombinedItem, Question, PermissionSuggestion } from '../../src/interaction/request.js';

export type RunStatus = 'running' | 'idle' | 'suspended' | 'completed' | 'failed' | 'cancelled' | 'max_steps';

export interface RunView {
  id: string;
  status: RunStatus;
  /** What the run needs from a person now (derived by the server from the request it waits for). */
  waitingFor: 'approval' | 'question' | 'message' | null;
  userId: string;
  task: string;
  model: string | null;
  pendingInteractionId: string | null;
  finalText: string | null;
  error: { code: string; message: string } | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export interface InteractionView {
  id: string;
  runId: string;
  userId: string;
  kind: string;
  status: 'pending' | 'answered' | 'expired' | 'cancelled';
  request: import('../../src/interaction/request.js').InteractionRequest;
  answeredBy: string | null;
  answeredAt: string | null;
  createdAt: string;
  /** The task, folder, asker, risk and mode of the ask (src/runtime/ask-context.ts). */
  context?: AskContext;
}

export type AskContext = import('../../src/runtime/ask-context.js').AskContext;

/** The answer fields of one item (or of a whole request, with `requestId` and `kind` added). */
export interface AnswerFields {
  kind: 'input' | 'select' | 'confirm' | 'questions' | 'combined';
  text?: string;
  selected?: string[];
  confirmed?: boolean;
  answers?: Record<string, string | string[]>;
  responses?: Record<string, AnswerFields>;
  updatedInput?: unknown;
  message?: string;
  remember?: 'once' | 'session' | 'local' | 'project' | 'user';
  rule?: string;
}

/** The project rules of a run's folder (`.sage/settings.local.json`), from GET /runs/:id/rules. */
export interface ProjectRules {
  cwd: string;
  file: string;
  trusted: boolean;
  allow: string[];
  /** Whether this user may save an "always, this project" answer there; `why` says why not. */
  canSave: boolean;
  why?: string;
}

export interface Me {
  userId: string;
  role: 'user' | 'admin';
  auth: boolean;
  /** The permission modes this server lets a client pick. */
  permissionModes: string[];
  /** The working directories a run may use. */
  roots: string[];
}
