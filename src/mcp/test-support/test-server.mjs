/* global process, Buffer, setImmediate */
// A small MCP server for Sage's tests and benchmark (plain JavaScript so it starts without a build):
// a plain tool, a destructive tool, a tool that elicits, and tools that crash, hang or return
// images and links. stdio by default; `--http` serves Streamable HTTP on 127.0.0.1 (port 0) and
// prints `LISTENING <url>` on stdout.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** A real 1×1 red PNG (70 bytes): tests send it through the providers' real wire formats (mcp-images.test.ts has the same bytes). */
const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==';

function build() {
  const server = new McpServer({ name: 'sage-test', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes its text.', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } }, async ({ text }) => ({
    content: [{ type: 'text', text: `echo: ${text}` }],
  }));
  server.registerTool('delete_record', { description: 'Deletes a record (destructive).', inputSchema: { id: z.string() }, annotations: { destructiveHint: true } }, async ({ id }) => ({
    content: [{ type: 'text', text: `deleted record ${id}` }],
  }));
  server.registerTool('ask_name', { description: 'Asks the person for a name and a colour, then greets them.', inputSchema: {} }, async () => {
    const answer = await server.server.elicitInput({
      message: 'Who are you?',
      requestedSchema: {
        type: 'object',
        properties: {
          name: { type: 'string', title: 'Name', minLength: 1, default: 'Dee' },
          color: { type: 'string', title: 'Colour', enum: ['red', 'green'] },
          age: { type: 'integer', title: 'Age', minimum: 0 },
        },
        required: ['name'],
      },
    });
    if (answer.action !== 'accept') return { content: [{ type: 'text', text: `elicitation ${answer.action}` }] };
    return { content: [{ type: 'text', text: `hello ${answer.content.name} (${JSON.stringify(answer.content)})` }] };
  });
  server.registerTool('crash', { description: 'Exits the server process.', inputSchema: {} }, async () => {
    setImmediate(() => process.exit(3));
    return new Promise(() => {});
  });
  server.registerTool('hang', { description: 'Never answers.', inputSchema: {} }, async () => new Promise(() => {}));
  server.registerTool('pid', { description: 'Returns the server process id.', inputSchema: {} }, async () => ({ content: [{ type: 'text', text: String(process.pid) }] }));
  server.registerTool('media', { description: 'Returns an image, an image type models do not take, and a resource link.', inputSchema: {} }, async () => ({
    content: [
      { type: 'text', text: 'here is a picture' },
      { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
      { type: 'image', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64'), mimeType: 'image/svg+xml' },
      { type: 'resource_link', uri: 'file:///tmp/report.txt', name: 'report', mimeType: 'text/plain' },
    ],
  }));
  return server;
}

if (process.argv.includes('--http')) {
  // One session per client (its capabilities, such as elicitation, are known from its initialize).
  const sessions = new Map();
  const http = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const message = body ? JSON.parse(body) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => sessions.set(sid, transport) });
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, message);
  });
  http.listen(0, '127.0.0.1', () => {
    process.stdout.write(`LISTENING http://127.0.0.1:${http.address().port}/mcp\n`);
  });
} else {
  await build().connect(new StdioServerTransport());
}
