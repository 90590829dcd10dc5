/**
 * The model a run gets when none is named, by the provider key that is set: the only place these
 * defaults are written (the foreground CLI, `--detach` and the interactive session all read it).
 */
export const DEFAULT_MODELS: ReadonlyArray<{ variable: string; spec: string }> = [
  { variable: 'ANTHROPIC_API_KEY', spec: 'anthropic:claude-sonnet-4-5' },
  { variable: 'OPENAI_API_KEY', spec: 'openai:gpt-4.1' },
];

/** The default model spec for the keys set in `env`, if any. */
export function defaultModelSpec(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return DEFAULT_MODELS.find((d) => env[d.variable]?.trim())?.spec;
}
