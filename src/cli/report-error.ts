import { styleText } from 'node:util';
import { SageError } from '../errors/index.js';
import { EXIT, type ExitCode } from './exit-codes.js';

/** Prints an error as one clear line on stderr (the stack only with --verbose) and picks the exit code. */
export function reportError(error: unknown, verbose: boolean): ExitCode {
  const usage = SageError.isInstance(error) && (error.code === 'usage_error' || error.code === 'settings_invalid' || error.code === 'invalid_input' || error.code === 'model_spec_invalid' || error.code === 'model_api_key_missing' || error.code === 'agent_unknown' || error.code === 'agent_config_invalid' || error.code === 'channel_config');
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${styleText('red', 'error:')} ${message}\n`);
  if (verbose && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return usage ? EXIT.usage : EXIT.failed;
}
