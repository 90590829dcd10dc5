import type { DecisionSource, PermissionBehavior } from './types.js';

/** One line of the audit trail: a decision, or what a person answered to an ask. */
export interface AuditRecord {
  at: number;
  kind: 'decision' | 'answer';
  runId: string;
  sessionId: string;
  userId: string;
  toolCallId: string;
  toolName: string;
  /** SHA-256 of the canonical input: what was decided, without storing secrets it may hold. */
  inputHash: string;
  behavior?: PermissionBehavior;
  reason?: string;
  rule?: string;
  ruleSource?: string;
  source?: DecisionSource;
  mode?: string;
  /** For answers: approved, rejected or timed out (a timeout is not a denial). */
  answer?: 'approved' | 'rejected' | 'timedOut';
  remember?: string;
  /** For answers: the surface the answer came through (web, cli, terminal, chat…), else the run's channel. */
  channel?: string;
  /** For answers: the reason the person typed with a denial. */
  message?: string;
  /** For answers: the input as the person edited it before allowing ("edit then allow"). */
  updatedInput?: unknown;
  /** For answers to a question (AskUserQuestion, input, select): what the person answered. */
  answers?: Record<string, string | string[]>;
}

export interface AuditQuery {
  runId?: string;
  sessionId?: string;
  userId?: string;
  toolName?: string;
  behavior?: PermissionBehavior;
  limit?: number;
}

/** Append-only log of permission decisions; backends implement it in src/store/. */
export interface AuditLog {
  readonly specificationVersion: 'v1';
  append(record: AuditRecord): Promise<void>;
  query(filter?: AuditQuery): Promise<AuditRecord[]>;
}

export class InMemoryAuditLog implements AuditLog {
  readonly specificationVersion = 'v1' as const;
  private readonly records: AuditRecord[] = [];

  async append(record: AuditRecord): Promise<void> {
    this.records.push({ ...record });
  }

  async query(filter: AuditQuery = {}): Promise<AuditRecord[]> {
    const matches = this.records.filter((r) =>
      (filter.runId === undefined || r.runId === filter.runId) &&
      (filter.sessionId === undefined || r.sessionId === filter.sessionId) &&
      (filter.userId === undefined || r.userId === filter.userId) &&
      (filter.toolName === undefined || r.toolName === filter.toolName) &&
      (filter.behavior === undefined || r.behavior === filter.behavior));
    return filter.limit === undefined ? matches.map((r) => ({ ...r })) : matches.slice(-filter.limit).map((r) => ({ ...r }));
  }
}
