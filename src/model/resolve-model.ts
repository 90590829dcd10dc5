import type * as AnthropicPackage from '@ai-sdk/anthropic';
import type * as OpenAIPackage from '@ai-sdk/openai';
import type * as OpenAICompatiblePackage from '@ai-sdk/openai-compatible';
import { createRequire } from 'node:module';
import { createAiSdkModel } from './ai-sdk/ai-sdk-model.js';
import { defaultContextWindow } from './context-windows.js';
import { InvalidModelSpecError, MissingApiKeyError } from './errors.js';
import { parseModelSpec, type ModelSpec } from './model-spec.js';
import { loadScriptedModel } from './scripted-model.js';
import type { Model } from './types.js';

export { MODEL_PROVIDERS, parseModelSpec } from './model-spec.js';

/**
 * A provider's package is loaded when a model of its own is first resolved, not with this module:
 * a process carries only the providers it uses (a server with its one model; none for a scripted
 * one), since each costs memory in a started server (figures in bench/README.md).
 * require() keeps resolveModel synchronous; each package ships a CommonJS build.
 */
const loadPackage = createRequire(import.meta.url);
export type { ModelProvider, ModelSpec } from './model-spec.js';

export interface ResolveModelOptions {
  /** Overrides the provider's base URL; required for `openai-compatible`. */
  baseUrl?: string;
  /** Where keys and base URLs are read from; `process.env` by default. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The fetch the provider package uses (a proxy, a test recorder). */
  fetch?: typeof globalThis.fetch;
  /** Overrides the default window of the model's family (see `defaultContextWindow`). */
  contextWindow?: number;
  maxOutputTokens?: number;
}

const ANTHROPIC_URL = 'https://api.anthropic.com/v1';
const OPENAI_URL = 'https://api.openai.com/v1';

/**
 * Resolves `provider:name` to a Model. Keys come from the environment (ANTHROPIC_API_KEY,
 * OPENAI_API_KEY, SAGE_OPENAI_COMPATIBLE_API_KEY), base URLs from `baseUrl` or
 * ANTHROPIC_BASE_URL / OPENAI_BASE_URL. Everything is read from `env` and passed explicitly, so a
 * test's `env` is never mixed with the process environment. The model is not wrapped in recovery:
 * wrap it with `withRecovery` (the CLI and server do).
 *
 * @example
 * const model = withRecovery(resolveModel('anthropic:claude-sonnet-4-5'), { maxAttempts: 4 });
 * const local = resolveModel('openai-compatible:llama3.1:8b', { baseUrl: 'http://localhost:11434/v1' });
 */
export function resolveModel(spec: string, options: ResolveModelOptions = {}): Model {
  return resolveParsedModel(parseModelSpec(spec), options);
}

/**
 * Resolves a spec already parsed by `parseModelSpec`: a caller that checked the parsed spec (the
 * server's policy) hands over the very value it checked, so nothing is parsed twice.
 */
export function resolveParsedModel(parsed: ModelSpec, options: ResolveModelOptions = {}): Model {
  const { provider, name, spec } = parsed;
  const env = options.env ?? process.env;
  const contextWindow = options.contextWindow ?? defaultContextWindow(name);
  const common = { contextWindow, maxOutputTokens: options.maxOutputTokens };

  switch (provider) {
    case 'anthropic': {
      const apiKey = requireKey(env, 'ANTHROPIC_API_KEY', 'Anthropic');
      const baseURL = withApiVersion(options.baseUrl ?? nonEmpty(env.ANTHROPIC_BASE_URL) ?? ANTHROPIC_URL);
      const { createAnthropic } = loadPackage('@ai-sdk/anthropic') as typeof AnthropicPackage;
      const languageModel = createAnthropic({ apiKey, baseURL, fetch: options.fetch })(name);
      return createAiSdkModel(languageModel, { id: spec, providerName: 'Anthropic', keyVariable: 'ANTHROPIC_API_KEY', toolResultImages: 'inline', ...common });
    }
    case 'openai': {
      const apiKey = requireKey(env, 'OPENAI_API_KEY', 'OpenAI');
      const baseURL = options.baseUrl ?? nonEmpty(env.OPENAI_BASE_URL) ?? OPENAI_URL;
      // `openai(name)` speaks the Responses API (POST /responses) in @ai-sdk/openai 3.
      const { createOpenAI } = loadPackage('@ai-sdk/openai') as typeof OpenAIPackage;
      const languageModel = createOpenAI({ apiKey, baseURL, fetch: options.fetch })(name);
      return createAiSdkModel(languageModel, { id: spec, providerName: 'OpenAI', keyVariable: 'OPENAI_API_KEY', toolResultImages: 'inline', ...common });
    }
    case 'openai-compatible': {
      const baseURL = options.baseUrl;
      if (!baseURL) {
        throw new InvalidModelSpecError(spec, 'an OpenAI-compatible server needs its base URL, e.g. --base-url http://localhost:11434/v1 for Ollama or http://localhost:8000/v1 for vLLM.');
      }
      // Local servers usually need no key; hosted ones take it as a bearer token.
      const keyVariable = nonEmpty(env.SAGE_OPENAI_COMPATIBLE_API_KEY) ? 'SAGE_OPENAI_COMPATIBLE_API_KEY' : nonEmpty(env.OPENAI_API_KEY) ? 'OPENAI_API_KEY' : undefined;
      const { createOpenAICompatible } = loadPackage('@ai-sdk/openai-compatible') as typeof OpenAICompatiblePackage;
      const languageModel = createOpenAICompatible({
        name: 'openai-compatible',
        baseURL,
        apiKey: keyVariable ? env[keyVariable] : undefined,
        // Ask for usage in the last chunk (stream_options.include_usage); Ollama, vLLM and LM Studio honour it.
        includeUsage: true,
        fetch: options.fetch,
      })(name);
      return createAiSdkModel(languageModel, {
        id: spec,
        providerName: `The OpenAI-compatible server at ${baseURL}`,
        keyVariable: keyVariable ?? 'SAGE_OPENAI_COMPATIBLE_API_KEY',
        // Chat Completions tool messages are text: images follow in a user message.
        toolResultImages: 'user-message',
        ...common,
      });
    }
    case 'scripted':
      return loadScriptedModel(name);
  }
}

function requireKey(env: Readonly<Record<string, string | undefined>>, variable: string, provider: string): string {
  const key = nonEmpty(env[variable]);
  if (!key) throw new MissingApiKeyError(provider, variable);
  return key;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * Anthropic's own SDKs (and Claude Code) take ANTHROPIC_BASE_URL without the `/v1` that the AI
 * SDK's provider expects, so a proxy URL written for them is completed here.
 */
function withApiVersion(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return /\/v\d+$/.test(trimmed) ? trimmed : `${trimmed}/v1`;
}
