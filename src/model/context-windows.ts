/**
 * Default context windows (tokens) per model family, for auto-compaction. First match wins, so
 * more specific patterns come first. They are the providers' published limits for the standard
 * tier; a larger window behind a beta flag, or a local server started with a smaller one
 * (Ollama's `num_ctx`), is what the `contextWindow` option is for.
 */
const FAMILIES: ReadonlyArray<readonly [RegExp, number]> = [
  // Anthropic
  [/^claude-/, 200_000],
  // OpenAI
  [/^gpt-4\.1/, 1_047_576],
  [/^gpt-5/, 400_000],
  [/^gpt-4o/, 128_000],
  [/^gpt-4-turbo/, 128_000],
  [/^gpt-4(-|$)/, 8_192],
  [/^gpt-3\.5-turbo/, 16_385],
  [/^o[134](-|$)/, 200_000],
  [/^gpt-oss/, 131_072],
  // Open models commonly served through OpenAI-compatible servers
  [/^(meta-llama\/)?llama-?3\.[123]/i, 131_072],
  [/^(qwen\/)?qwen3/i, 40_960],
  [/^(qwen\/)?qwen2\.5/i, 32_768],
  [/^(deepseek-ai\/)?deepseek-(v3|r1|chat|reasoner)/i, 128_000],
  [/^(mistralai\/)?mistral-(large|small)/i, 128_000],
  [/^(google\/)?gemma-?3/i, 131_072],
];

/** The default window for a model name, or undefined when the family is unknown. */
export function defaultContextWindow(modelName: string): number | undefined {
  const name = modelName.trim();
  for (const [pattern, tokens] of FAMILIES) if (pattern.test(name)) return tokens;
  return undefined;
}
