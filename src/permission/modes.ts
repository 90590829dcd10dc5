import { z } from 'zod';

/** The five permission modes; a run may switch between them (`engine.setMode`). */
export const permissionModeSchema = z.enum(['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'], {
  error: () => 'a permission mode is one of default, acceptEdits, plan, bypassPermissions, dontAsk',
});
export type PermissionMode = z.infer<typeof permissionModeSchema>;

export const MODE_DESCRIPTIONS: Record<PermissionMode, string> = {
  default: 'asks for anything the rules and risk policy do not allow',
  acceptEdits: 'file edits inside the project are allowed without asking',
  plan: 'only read-only tools run; present a plan for approval to leave plan mode',
  bypassPermissions: 'everything is allowed except deny rules and asks that a rule or tool insists on',
  dontAsk: 'anything that would ask a person is denied',
};
