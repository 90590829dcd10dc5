import { InvalidModelSpecError } from './errors.js';

/** The providers `--model provider:name` accepts. */
export const MODEL_PROVIDERS = ['anthropic', 'openai', 'openai-compatible', 'scripted'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** A model spec after its one canonical parse: `spec` is exactly `${provider}:${name}`. */
export interface ModelSpec {
  provider: ModelProvider;
  name: string;
  spec: string;
}

/** Longest spec accepted: a provider name and a model name or a file path. */
export const MAX_MODEL_SPEC_LENGTH = 1_000;

// C0 and C1 controls, DEL, and invisible format characters (zero-width, bidi overrides, BOM):
// nothing a real model name or script path needs, and each lets two specs look alike.
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;
const EDGE_SPACE = /^\s|\s$/u;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The one parse of a model spec that every caller shares (the server's policy check and the
 * resolver), so what is checked is what is loaded. It normalises nothing: a spec that is not
 * already canonical is refused rather than trimmed or re-cased, because a check that sees one
 * spelling and a loader that sees another is how a `startsWith('scripted:')` guard was bypassed
 * by a leading space. Splits at the first colon (Ollama names contain colons: `llama3.1:8b`).
 */
export function parseModelSpec(spec: string): ModelSpec {
  if (typeof spec !== 'string' || spec === '') throw new InvalidModelSpecError('', 'the model spec is empty; write provider:name, e.g. anthropic:claude-sonnet-4-5.');
  const shown = quoteSpec(spec);
  if (spec.length > MAX_MODEL_SPEC_LENGTH) throw new InvalidModelSpecError(shown, `a model spec is at most ${MAX_MODEL_SPEC_LENGTH} characters.`);
  if (LONE_SURROGATE.test(spec)) throw new InvalidModelSpecError(shown, 'it contains a lone surrogate (malformed Unicode).');
  if (INVISIBLE.test(spec)) throw new InvalidModelSpecError(shown, 'it contains a control or invisible character (NUL, tab, newline, zero-width, bidi); write it plainly.');
  if (EDGE_SPACE.test(spec)) throw new InvalidModelSpecError(shown, 'it starts or ends with whitespace; write it without.');
  const colon = spec.indexOf(':');
  const provider = colon === -1 ? spec : spec.slice(0, colon);
  const name = colon === -1 ? '' : spec.slice(colon + 1);
  if (!(MODEL_PROVIDERS as readonly string[]).includes(provider)) {
    const hint = (MODEL_PROVIDERS as readonly string[]).includes(provider.trim().toLowerCase()) ? ` Providers are written in lower case with no spaces before the colon ("${provider.trim().toLowerCase()}:").` : '';
    throw new InvalidModelSpecError(
      shown,
      `unknown provider "${quoteSpec(provider)}". Use one of ${MODEL_PROVIDERS.map((p) => `${p}:<name>`).join(', ')} (e.g. anthropic:claude-sonnet-4-5).${hint}`,
    );
  }
  if (name.trim() === '') {
    throw new InvalidModelSpecError(shown, `the model name is missing; write ${provider}:<name>${provider === 'scripted' ? ' with the path of a script file' : ''}.`);
  }
  if (EDGE_SPACE.test(name)) throw new InvalidModelSpecError(shown, 'the name after the colon starts with whitespace; write it without.');
  return { provider: provider as ModelProvider, name, spec };
}

/** A spec as shown in messages: long ones cut, so an error never echoes a whole request field. */
function quoteSpec(text: string): string {
  const cut = text.length > 120 ? `${text.slice(0, 120)}…` : text;
  // Shown escaped: a control character echoed to a terminal could rewrite what the user sees.
  return cut.replace(new RegExp(`${INVISIBLE.source}|${LONE_SURROGATE.source}`, 'gu'), (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
}
