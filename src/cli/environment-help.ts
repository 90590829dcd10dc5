import { DEFAULT_MODELS } from '../runtime/default-models.js';

/** Which help names a variable: `sage --help` names them all, `sage run`/`sage serve --help` theirs. */
export type HelpScope = 'run' | 'serve';

export interface EnvironmentVariable {
  name: string;
  meaning: string;
  /** The commands whose help names it (every variable is in `sage --help`). */
  scopes: readonly HelpScope[];
  /** Set by Sage for itself, never by a person: listed here so the test knows it, left out of help. */
  internal?: true;
}

const both: readonly HelpScope[] = ['run', 'serve'];
const defaultModel = (variable: string) => DEFAULT_MODELS.find((d) => d.variable === variable)!.spec;

/**
 * Every environment variable Sage reads: the one list `--help` and the README's table follow (a
 * test checks that each `SAGE_*` name in src/ is here, and that help shows them).
 */
export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  {
    name: 'ANTHROPIC_API_KEY', scopes: both,
    meaning: 'the key for anthropic:<name> models; sage and sage run default to '
      + `${defaultModel('ANTHROPIC_API_KEY')} when it is set`,
  },
  {
    name: 'OPENAI_API_KEY', scopes: both,
    meaning: 'the key for openai:<name> models (and openai-compatible ones when SAGE_OPENAI_COMPATIBLE_API_KEY is unset); '
      + `without ANTHROPIC_API_KEY, sage and sage run default to ${defaultModel('OPENAI_API_KEY')} when it is set`,
  },
  {
    name: 'SAGE_OPENAI_COMPATIBLE_API_KEY', scopes: both,
    meaning: 'the bearer token for an openai-compatible:<name> server (--base-url); local servers need none',
  },
  {
    name: 'ANTHROPIC_BASE_URL', scopes: both,
    meaning: 'another endpoint for Anthropic models (a proxy); /v1 is added when missing',
  },
  { name: 'OPENAI_BASE_URL', scopes: both, meaning: 'another endpoint for OpenAI models' },
  {
    name: 'SAGE_MODEL', scopes: ['serve'],
    meaning: 'sage serve: the model of runs that name none (--model overrides it)',
  },
  {
    name: 'SAGE_HOME', scopes: both,
    meaning: 'the folder used as ~ for ~/.sage: user settings, trusted folders, agents, skills (default: your home)',
  },
  {
    name: 'SAGE_MANAGED_SETTINGS', scopes: both,
    meaning: "the operator's managed settings file: above every other file, and no client can weaken it",
  },
  {
    name: 'SAGE_DATABASE_URL', scopes: both,
    meaning: 'a Postgres URL: runs are stored there instead of SQLite at .sage/sage.db (--db wins)',
  },
  { name: 'SAGE_DATABASE_SCHEMA', scopes: both, meaning: 'the Postgres schema the store uses (default public)' },
  {
    name: 'SAGE_SQLITE_SYNCHRONOUS', scopes: both,
    meaning: "SQLite's synchronous setting: full (the default: a commit survives a power cut) or normal",
  },
  {
    name: 'SAGE_TOKENS', scopes: ['serve'],
    meaning: 'sage serve: bearer tokens, "tokA=alice,tokB=bob:admin" (required to listen beyond loopback)',
  },
  {
    name: 'SAGE_TOKENS_FILE', scopes: ['serve'],
    meaning: 'sage serve: a JSON file of tokens, { "tokens": [{ "token", "userId", "role" }] } (--tokens-file wins)',
  },
  {
    name: 'SAGE_SUBAGENT_MAX_DEPTH', scopes: both,
    meaning: 'how deep subagents may nest (default 1: a subagent starts none)',
  },
  { name: 'CI', scopes: ['run'], meaning: 'when set: no spinner, and the folder-trust question is never asked' },
  {
    name: 'CODEX_HOME', scopes: ['run'],
    meaning: 'Codex CLI runs (--agent codex): its home (default ~/.codex); Sage mounts its own config.toml over it',
  },
  {
    name: 'XDG_CACHE_HOME', scopes: both,
    meaning: "where the CLI keeps its compile cache (default ~/.cache; Sage's is in sage/ under it)",
  },
  {
    name: 'SAGE_SERVE_PARENT', scopes: ['serve'], internal: true,
    meaning: 'set by sage serve for the server process it starts',
  },
];

/** The help text's environment section for `sage --help` (no scope) or one command's help. */
export function environmentHelp(scope?: HelpScope): string {
  const shown = ENVIRONMENT_VARIABLES.filter((v) => !v.internal && (!scope || v.scopes.includes(scope)));
  const width = Math.max(...shown.map((v) => v.name.length));
  const lines = shown.map((v) => `  ${v.name.padEnd(width)}  ${v.meaning}`);
  const models = DEFAULT_MODELS.map((d) => `${d.spec} (when ${d.variable} is set)`).join(', else ');
  const model = scope === 'serve'
    ? ['Default model of runs that name none: --model, else SAGE_MODEL; with neither, a run must name its model.']
    : [
      `Default model, when neither --model nor a "model" setting names one: ${models}.`,
      'Offline: --model scripted:<file.json> plays a script (see demo/turns.json); sage demo needs no key.',
    ];
  return [
    '',
    ...model,
    '',
    'Environment:',
    ...lines,
    '',
  ].join('\n');
}
