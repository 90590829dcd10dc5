import { z } from 'zod';
import { agentEntrySchema, chainSchema } from '../agents/agent-settings.js';
import { channelCommonConfigSchema } from '../channels/adapter.js';
import { mcpServerConfigSchema } from '../mcp/config.js';
import { settingsFileSchema } from '../permission/settings-schema.js';
import { serverPolicyKeySchema } from '../runtime/server-policy.js';
import { webSettingsSchema } from '../tool/builtin/web-fetch.js';

/**
 * Every key a settings file may hold, in one schema: the permission loader's own schema with the
 * keys other modules read from the same files, each by the schema that module validates it with.
 * Documentation only: each module keeps loading its own key, so this adds no check to a run.
 */
export const settingsDocumentSchema = settingsFileSchema.extend({
  model: z.string().optional()
    .describe('The model of runs that name none, e.g. "anthropic:claude-sonnet-4-5" (--model overrides it; '
      + 'a project\'s only once the folder is trusted)'),
  mcpServers: z.record(z.string(), mcpServerConfigSchema).optional()
    .describe('MCP servers by name, as in .mcp.json; their tools are mcp__<server>__<tool> and pass the gate. '
      + 'A project\'s start only once the folder is trusted'),
  webFetch: webSettingsSchema.shape.webFetch.describe('Limits of the WebFetch tool'),
  webSearch: webSettingsSchema.shape.webSearch
    .describe('The backend of the WebSearch tool; without it WebSearch tells the model none is set'),
  agents: z.record(z.string(), agentEntrySchema).optional()
    .describe('External agents by preset name (claude-code, gemini, qwen, codex, acp): how to start each. '
      + 'A project\'s only once the folder is trusted'),
  chain: chainSchema.optional()
    .describe('Scripts around every run\'s work (--setup/--cleanup override them); a project\'s only once trusted'),
  server: serverPolicyKeySchema.optional()
    .describe('sage serve\'s policy, from the managed or the host user\'s file; no client can weaken it'),
  channels: z.record(z.string(), channelCommonConfigSchema.loose()).optional()
    .describe('Chat channels sage serve runs, by "<kind>" or "<kind>:<name>" (webhook, telegram, slack, feishu, '
      + 'whatsapp); each kind adds its own keys (src/channels/PLATFORMS.md). Read from ~/.sage/settings.json'),
});
