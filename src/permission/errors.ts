import { SageError } from '../errors/index.js';
import { visibleRule } from './rule-characters.js';

/** A permission rule that does not parse (`Bash(rm -rf` with no closing parenthesis). */
export class PermissionRuleError extends SageError {
  constructor(readonly rule: string, problem: string) {
    super('permission_rule_invalid', `Invalid permission rule "${visibleRule(rule)}": ${problem}`);
  }
}

/** A settings file that is not valid JSON or does not match the schema; names file, key and problem. */
export class SettingsFileError extends SageError {
  constructor(readonly file: string, readonly key: string, readonly problem: string, options?: { cause?: unknown }) {
    super('settings_invalid', `${file}: ${key}: ${problem}`, options);
  }
}

/** The shell grammar could not be loaded, so shell commands cannot be analysed. */
export class ShellParserUnavailableError extends SageError {
  constructor(options?: { cause?: unknown }) {
    super('shell_parser_unavailable', 'The bash grammar (tree-sitter-bash) could not be loaded.', options);
  }
}

/** A permission mode name that Sage does not know. */
export class UnknownPermissionModeError extends SageError {
  constructor(readonly mode: string) {
    super('permission_mode_unknown', `Unknown permission mode "${mode}"; use default, acceptEdits, plan, bypassPermissions or dontAsk.`);
  }
}

/** A rule scope that cannot be written to (e.g. `session` from outside a run). */
export class PermissionScopeError extends SageError {
  constructor(readonly scope: string, problem: string) {
    super('permission_scope_invalid', `Cannot use scope "${scope}": ${problem}`);
  }
}
