import { ChannelConfigError } from './errors.js';

/**
 * Reads a secret from the environment variable a config names (`tokenEnv: "TELEGRAM_BOT_TOKEN"`).
 * Secrets never live in settings files; a missing one stops the start naming the config field.
 */
export function readSecretEnv(env: NodeJS.ProcessEnv, varName: string, field: string): string {
  const value = env[varName];
  if (value === undefined || value.trim() === '') {
    throw new ChannelConfigError(field, `the environment variable ${varName} is not set (it holds this channel's secret)`);
  }
  return value.trim();
}
