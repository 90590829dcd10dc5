// MCP servers as tools of a run, under the same permission gate; their elicitations asked of people.
export { SERVER_NAME, mcpServerConfigSchema, parseMcpServers, loadMcpConfigFile, resolveMcpServers, expandEnv, expandServer } from './config.js';
export type { McpServerConfig, McpServers, McpNotice, McpWaitingForTrust, ResolveMcpOptions } from './config.js';
export { McpConfigError, McpServerError } from './errors.js';
export { McpConnection, MCP_CONNECT_TIMEOUT_MS, MCP_DEFAULT_CALL_TIMEOUT_MS } from './connection.js';
export type { CallOutcome, Elicit, ElicitParams, McpConnectionOptions } from './connection.js';
export { elicitationDraft, elicitationResult, DECISION_KEY, ELICIT_ATTEMPTS } from './elicitation.js';
export { McpToolset, mcpToolName, riskOfAnnotations, resultText, resultContent, MCP_MAX_RESULT_CHARS, MCP_MAX_IMAGE_BYTES, MCP_MAX_RESULT_IMAGE_BYTES } from './tools.js';
export type { McpServerStatus, McpResultContent } from './tools.js';
export { McpRunTools } from './run-tools.js';
