/**
 * Test doubles for agents built on Sage — the same fakes Sage's own tests use.
 * Import from `sage-agent/testing`.
 */

// A model that plays a script of turns, offline.
export { ScriptedModel, loadScriptedModel, parseScript } from '../model/scripted-model.js';
export type { Script, ScriptedTurn } from '../model/scripted-model.js';

// Answering interactions from a test: an in-process channel, or automatic answers.
export { createInputChannel, createAutoResponder, defaultAnswer } from '../interaction/index.js';

// Loopback servers that speak the providers' real wire formats.
export { FakeProviderServer, startFakeAnthropic, startFakeOpenAI } from './fake-providers/index.js';
export type { FakeProviderServerOptions, FakeTurn, FakeReply, FakeToolCall, FakeUsage, RecordedRequest } from './fake-providers/index.js';

// Gates for tests that measure something other than permissions.
export { allowAllGate, minimalGate } from '../permission/minimal-gate.js';
