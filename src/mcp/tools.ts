import { z } from 'zod';
import type { CallToolResult, ElicitResult, Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import type { RiskLevel } from '../permission/types.js';
import { base64Bytes, MODEL_IMAGE_MEDIA_TYPES } from '../model/tool-image.js';
import type { ToolImage } from '../model/types.js';
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

/** Anthropic's limit per image (OpenAI's is larger): a bigger image is named, not sent. */
export const MCP_MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** All the images of one result, at most: each is sent again with every later model call of the run. */
export const MCP_MAX_RESULT_IMAGE_BYTES = 10 * 1024 * 1024;

/** What the model gets of one MCP result: its text, and the images it is shown with it. */
export interface McpResultContent {
  text: string;
  images: ToolImage[];
  /** Audio, and images the model is not sent: for front ends (ToolResult.data), never for the model. */
  media: { type: 'image' | 'audio'; mimeType: string; data: string }[];
}

const MB = 1024 * 1024;

/**
 * An MCP tool result as the model reads it: text as is; images (and embedded image resources) of a
 * type and size a model API takes are shown to it, each named in the text where it came; other
 * images and audio described; resource links named with their URI.
 */
export function resultContent(result: CallToolResult): McpResultContent {
  const parts: string[] = [];
  const images: ToolImage[] = [];
  const media: McpResultContent['media'] = [];
  let imageBytes = 0;
  /** Adds an image to what the model is shown, or says in the text why it is not. */
  const image = (label: string, mimeType: string, raw: string): void => {
    // Base64 with line breaks is valid MCP (atob skips them) but not what the provider APIs take.
    const data = /\s/.test(raw) ? raw.replace(/\s+/g, '') : raw;
    const bytes = base64Bytes(data);
    const refused = !MODEL_IMAGE_MEDIA_TYPES.includes(mimeType)
      ? 'not shown: models take PNG, JPEG, GIF and WebP images'
      : bytes > MCP_MAX_IMAGE_BYTES
        ? `not shown: over the ${MCP_MAX_IMAGE_BYTES / MB} MB a model takes per image`
        : imageBytes + bytes > MCP_MAX_RESULT_IMAGE_BYTES
          ? `not shown: the result's images are over ${MCP_MAX_RESULT_IMAGE_BYTES / MB} MB`
          : undefined;
    if (refused) {
      parts.push(`[${label}, ${bytes} bytes: ${refused}]`);
      media.push({ type: 'image', mimeType, data });
      return;
    }
    imageBytes += bytes;
    images.push({ mediaType: mimeType, data });
    parts.push(`[${label}, ${bytes} bytes]`);
  };
  for (const item of result.content ?? []) {
    switch (item.type) {
      case 'text':
        parts.push(item.text);
        break;
      case 'image':
        image(`image ${item.mimeType}`, item.mimeType, item.data);
        break;
      case 'audio':
        // No provider takes audio in a tool result: the model is told what came back; front ends get the data.
        parts.push(`[audio ${item.mimeType}, ${base64Bytes(item.data)} bytes]`);
        media.push({ type: 'audio', mimeType: item.mimeType, data: item.data });
        break;
      case 'resource_link':
        parts.push(`[resource link: ${item.name} ${item.uri}${item.mimeType ? ` (${item.mimeType})` : ''}${item.description ? ` — ${item.description}` : ''}]`);
        break;
      case 'resource': {
        const r = item.resource;
        if ('text' in r && typeof r.text === 'string') parts.push(`[resource ${r.uri}]\n${r.text}`);
        else if ('blob' in r && typeof r.blob === 'string' && r.mimeType?.startsWith('image/')) image(`resource ${r.uri} (${r.mimeType})`, r.mimeType, r.blob);
        else parts.push(`[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}, binary]`);
        break;
      }
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  let text = parts.join('\n');
  if (text.length > MCP_MAX_RESULT_CHARS) text = `${text.slice(0, MCP_MAX_RESULT_CHARS)}\n[… ${text.length - MCP_MAX_RESULT_CHARS} more characters cut]`;
  return { text, images, media };
}

/** A tool result as the text the model reads (see resultContent; the images it names are not included). */
export function resultText(result: CallToolResult): string {
  return resultContent(result).text;
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
      const { text, images, media } = resultContent(outcome.result);
      const structured = outcome.result.structuredContent;
      return {
        content: text || '(the tool returned nothing)',
        ...(outcome.result.isError ? { isError: true } : {}),
        ...(images.length ? { images } : {}),
        ...(media.length || structured !== undefined ? { data: { ...(media.length ? { media } : {}), ...(structured !== undefined ? { structuredContent: structured } : {}) } } : {}),
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
