import { SageError } from '../errors/index.js';

/** An MCP configuration (a `.mcp.json`, `--mcp-config FILE`, `mcpServers` in settings) that does not validate: names the file and the field. */
export class McpConfigError extends SageError {
  constructor(
    readonly file: string,
    readonly field: string,
    detail: string,
  ) {
    super('mcp_config_invalid', `${file}: ${field}: ${detail}`);
  }
}

/** An MCP server could not be started or reached (bad command, refused connection, no answer to initialize in time). */
export class McpServerError extends SageError {
  constructor(
    readonly server: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('mcp_server_unavailable', `MCP server ${server}: ${message}`, options);
  }
}
