import type { InteractionRequestOf } from './request.js';

/**
 * The gate's reason for a permission ask as one line a person reads beside the command, without the
 * command it quotes: every surface shows the command once, exactly as it will run, just by it.
 */
type ConfirmRequest = InteractionRequestOf<'confirm'>;

export function reasonLine(request: Pick<ConfirmRequest, 'reason' | 'description' | 'toolName' | 'input'>): string {
  const reason = request.reason ?? request.description ?? '';
  const input = (request.input ?? {}) as Record<string, unknown>;
  const command = request.toolName === 'Bash' && typeof input['command'] === 'string' ? input['command'] : undefined;
  const line = command ? reason.split(`\`${command}\``).join('').replace(/ {2,}/g, ' ') : reason;
  return (line.split('\n')[0] ?? '').trim();
}
