import type { LanguageModel } from 'ai';

/**
 * The provider-level language model types (spec v3), derived from `ai`'s public `LanguageModel`
 * so that we depend only on packages we declare (`@ai-sdk/provider` is a transitive dependency).
 */
export type ProviderLanguageModel = Extract<LanguageModel, { specificationVersion: 'v3' }>;
export type ProviderCallOptions = Parameters<ProviderLanguageModel['doStream']>[0];
export type ProviderPrompt = ProviderCallOptions['prompt'];
export type ProviderMessage = ProviderPrompt[number];
export type ProviderFunctionTool = Extract<NonNullable<ProviderCallOptions['tools']>[number], { type: 'function' }>;
type StreamResult = Awaited<ReturnType<ProviderLanguageModel['doStream']>>;
export type ProviderStreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;
