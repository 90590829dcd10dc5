// The helpers live beside the src suites that use them (src/test-support), inside tsc's rootDir.
export * from '../../src/test-support/real-agents.js';
