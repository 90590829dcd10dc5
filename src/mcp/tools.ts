import { z } from 'zod';
import type { CallToolResult, ElicitResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import type { RiskLevel } from '../permission/types.js';
import type { Tool, ToolContext, ToolResult } from '../tool/types.js';
import type { McpNotice, McpServers } from './config.js';
import { McpConnection, type ElicitParams, type McpConnectionOptions } from './connection.js';
import { ELICIT_ATTEMPTS, elicitationDraft, elicitationResult } from './elicitation.js';

/** What the model reads of one result at most; the rest is cut with a note. */
export const MCP_MAX_RESULT_CHARS = 100_000;
/** Model APIs take tool names of 1-64 letters, digits, `_` and `-`. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `mcp__<server>__<tool>`, with characters a model API refuses replaced by `_` (as Claude Code does). */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/**
 * The risk a tool's annotations suggest. Annotations are the server's claims, not guarantees, and
 * the gate runs LOW-risk calls without asking, so no MCP tool is LOW: a server cannot make its own
 * tools run unasked by calling them read-only. readOnlyHint: MEDIUM; destructiveHint, or a tool
 * that changes things in the open world (openWorldHint without readOnlyHint): HIGH (the web page
 * offers no quick "allow", and an approval is not remembered); otherwise MEDIUM.
 */
export function riskOfAnnotations(annotations: McpToolInfo['annotations']): RiskLevel {
  if (annotations?.readOnlyHint === true) return 'MEDIUM';
  if (annotations?.destructiveHint === true || annotations?.openWorldHint === true) return 'HIGH';
  return 'MEDIUM';
}

/** A server's JSON Schema as zod for Sage's registry; one zod cannot express becomes a plain object (the server validates). */
function inputSchemaOf(schema: McpToolInfo['inputSchema']): z.ZodType<Record<string, unknown>> {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<Record<string, unknown>>;
  } catch {
    return z.looseObject({});
  }
}

function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** A tool result as the text the model reads: text as is, images and audio described, resource links named. */
export function resultText(result: CallToolResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        parts.push(item.text);
        break;
      case 'image':
      case 'audio':
        // Sage's tool results are text: the model is told what came back; front ends get the data.
        parts.push(`[${item.type} ${item.mimeType}, ${base64Bytes(item.data)} bytes]`);
        break;
      case 'resource_link':
        parts.push(`[resource link: ${item.name} ${item.uri}${item.mimeType ? ` (${item.mimeType})` : ''}${item.description ? ` — ${item.description}` : ''}]`);
        break;
      case 'resource': {
        const r = item.resource;
        parts.push('text' in r && typeof r.text === 'string' ? `[resource ${r.uri}]\n${r.text}` : `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, binary]`);
        break;
      }
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  let text = parts.join('\n');
  if (text.length > MCP_MAX_RESULT_CHARS) text = `${text.slice(0, MCP_MAX_RESULT_CHARS)}\n[… ${text.length - MCP_MAX_RESULT_CHARS} more characters cut]`;
  return text;
}

/** Asks the person for one elicitation (again, when the answer does not fit the schema), through the run's interact(). */
async function elicit(server: string, params: ElicitParams, ctx: ToolContext, toolName: string) {
  let problem: string | undefined;
  for (let attempt = 0; attempt < ELICIT_ATTEMPTS; attempt++) {
    const outcome = await ctx.interact(elicitationDraft(server, params, { toolCallId: ctx.toolCallId, toolName }, problem));
    const result = elicitationResult(params, outcome);
    if (!('problem' in result) || typeof result.problem !== 'string') return result as ElicitResult;
    problem = result.problem;
  }
  return { action: 'cancel' as const };
}

function toolOf(connection: McpConnection, info: McpToolInfo, name: string): Tool<Record<string, unknown>> {
  const risk = riskOfAnnotations(info.annotations);
  const title = info.annotations?.title ?? info.title;
  return {
    name,
    description: `${title ? `${title}: ` : ''}${info.description ?? `Tool ${info.name} of the MCP server ${connection.name}.`} (MCP server ${connection.name})`.slice(0, 4_000),
    inputSchema: inputSchemaOf(info.inputSchema),
    risk,
    readOnly: false,
    async execute(input, ctx): Promise<ToolResult> {
      const outcome = await connection.callTool(info.name, input ?? {}, { signal: ctx.signal, elicit: (params) => elicit(connection.name, params, ctx, name) });
      if (!outcome.ok) return { content: outcome.error, isError: true };
      const images = (outcome.result.content ?? []).filter((c) => c.type === 'image' || c.type === 'audio');
      return {
        content: resultText(outcome.result) || '(the tool returned nothing)',
        ...(outcome.result.isError ? { isError: true } : {}),
        ...(images.length || outcome.result.structuredContent !== undefined ? { data: { ...(images.length ? { media: images } : {}), ...(outcome.result.structuredContent !== undefined ? { structuredContent: outcome.result.structuredContent } : {}) } } : {}),
      };
    },
  };
}

/** One server's status, for `sage mcp list`. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  status: 'connected' | 'failed';
  error?: string;
  tools: { name: string; server: string; risk: RiskLevel; description?: string }[];
}

/**
 * The MCP servers of one run: started together, their tools as Sage tools. A server that does not
 * start is reported (notices, status) and its tools are missing; the run goes on with the rest.
 */
export class McpToolset {
  readonly connections: McpConnection[];
  tools: Tool[] = [];
  notices: McpNotice[] = [];
  statuses: McpServerStatus[] = [];

  constructor(servers: McpServers, options: McpConnectionOptions) {
    this.connections = Object.entries(servers).map(([name, config]) => new McpConnection(name, config, options));
  }

  async start(): Promise<this> {
    const seen = new Set<string>();
    const results = await Promise.allSettled(this.connections.map((c) => c.start()));
    this.tools = [];
    this.statuses = [];
    results.forEach((result, i) => {
      const connection = this.connections[i]!;
      const transport = connection.config.type === 'http' ? 'http' : 'stdio';
      if (result.status === 'rejected') {
        const error = result.reason instanceof Error ? result.reason.message : String(result.reason);
        const message = error.replace(/^MCP server \S+: /, '');
        this.notices.push({ file: `MCP server ${connection.name}`, message });
        this.statuses.push({ name: connection.name, transport, status: 'failed', error, tools: [] });
        return;
      }
      const listed: McpServerStatus['tools'] = [];
      for (const info of connection.tools) {
        const name = mcpToolName(connection.name, info.name);
        if (!TOOL_NAME.test(name)) {
          this.notices.push({ file: `MCP server ${connection.name}`, message: `tool ${info.name} is skipped: ${name} is longer than the 64 characters model APIs take` });
          continue;
        }
        if (seen.has(name)) {
          this.notices.push({ file: `MCP server ${connection.name}`, message: `tool ${info.name} is skipped: another of its tools already has the name ${name}` });
          continue;
        }
        seen.add(name);
        this.tools.push(toolOf(connection, info, name));
        listed.push({ name, server: connection.name, risk: riskOfAnnotations(info.annotations), ...(info.description ? { description: info.description } : {}) });
      }
      this.statuses.push({ name: connection.name, transport, status: 'connected', tools: listed });
    });
    return this;
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.close()));
  }
}
