// A minimal MCP server over stdio (JSON-RPC 2.0, one message per line) with two harmless tools,
// so the differential test can ask Claude Code about mcp__ rules. It touches nothing: `echo`
// returns its text, `wipe` only says what it would have wiped.
import process from 'node:process';
import { createInterface } from 'node:readline';

const TOOLS = [
  { name: 'echo', description: 'Returns the text it is given.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  { name: 'wipe', description: 'Pretends to wipe a table (does nothing).', inputSchema: { type: 'object', properties: { table: { type: 'string' } }, required: ['table'] } },
];

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id === undefined || message.id === null) return; // a notification
  const params = message.params ?? {};
  switch (message.method) {
    case 'initialize':
      send({ id: message.id, result: { protocolVersion: params.protocolVersion ?? '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1.0.0' } } });
      break;
    case 'ping':
      send({ id: message.id, result: {} });
      break;
    case 'tools/list':
      send({ id: message.id, result: { tools: TOOLS } });
      break;
    case 'tools/call': {
      const args = params.arguments ?? {};
      const text = params.name === 'echo' ? `echo: ${String(args.text)}` : `would wipe ${String(args.table)} (nothing done)`;
      send({ id: message.id, result: { content: [{ type: 'text', text }] } });
      break;
    }
    default:
      send({ id: message.id, error: { code: -32601, message: `method not found: ${message.method}` } });
  }
});
