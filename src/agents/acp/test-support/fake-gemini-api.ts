/**
 * A loopback fake of the Gemini API (v1beta) as Gemini CLI speaks it: `:streamGenerateContent?alt=sse`,
 * `:generateContent` and `:countTokens` of any model. The conversation turn is answered by `reply`;
 * Gemini CLI's side requests (routing, next-speaker checks: a JSON response schema or mime type) get
 * a small object filled from their schema, or the session would stall waiting on them.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GeminiPart {
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown> };
  functionResponse?: { name: string; response: Record<string, unknown> };
  [key: string]: unknown;
}
export interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}
export interface GeminiRequest {
  /** `streamGenerateContent`, `generateContent` or `countTokens`. */
  method: string;
  model: string;
  body: { contents?: GeminiContent[]; generationConfig?: Record<string, unknown>; [key: string]: unknown };
  /** A side request asking for JSON (not part of the conversation). */
  side: boolean;
}
/** The model's turn: text, or one function call. */
export type GeminiReply = { text: string } | { functionCall: { name: string; args: Record<string, unknown> } };

export interface FakeGeminiApi {
  readonly url: string;
  readonly requests: GeminiRequest[];
  close(): Promise<void>;
}

export async function startFakeGeminiApi(reply: (request: GeminiRequest) => GeminiReply): Promise<FakeGeminiApi> {
  const requests: GeminiRequest[] = [];
  const server: Server = createServer((req, res) => {
    void readJson(req).then((body) => {
      const match = /\/models\/([^/:]+):(\w+)/.exec(req.url ?? '');
      if (!match) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 404, message: `not served: ${req.url}` } }));
        return;
      }
      const [, model, method] = match as unknown as [string, string, string];
      const config = (body.generationConfig ?? {}) as { responseJsonSchema?: unknown; responseSchema?: unknown; responseMimeType?: string };
      const schema = config.responseJsonSchema ?? config.responseSchema;
      const side = schema !== undefined || config.responseMimeType === 'application/json';
      const request: GeminiRequest = { method, model, body, side };
      requests.push(request);
      if (method === 'countTokens') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ totalTokens: 10 }));
        return;
      }
      const part: GeminiPart = side ? { text: JSON.stringify(fromSchema(schema)) } : partOf(reply(request));
      const frame = {
        candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        modelVersion: model,
      };
      if (method === 'streamGenerateContent') {
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(`data: ${JSON.stringify(frame)}\r\n\r\n`);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(frame));
      }
    }, (error: unknown) => res.writeHead(400).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function partOf(reply: GeminiReply): GeminiPart {
  return 'text' in reply ? { text: reply.text } : { functionCall: reply.functionCall };
}

/** The smallest object a JSON schema accepts; "user" for a next-speaker check, so the turn ends. */
function fromSchema(schema: unknown, key = ''): unknown {
  const s = (schema ?? {}) as { type?: string | string[]; properties?: Record<string, unknown>; enum?: unknown[]; items?: unknown };
  const type = String(Array.isArray(s.type) ? s.type[0] : (s.type ?? (s.properties ? 'object' : 'string'))).toLowerCase();
  if (s.enum?.length) return key === 'next_speaker' && s.enum.includes('user') ? 'user' : s.enum[0];
  if (type === 'object') return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, fromSchema(v, k)]));
  if (type === 'array') return [];
  if (type === 'boolean') return false;
  if (type === 'number' || type === 'integer') return 0;
  return key === 'next_speaker' ? 'user' : 'fake';
}

function readJson(req: IncomingMessage): Promise<GeminiRequest['body']> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text ? (JSON.parse(text) as GeminiRequest['body']) : {});
      } catch (error) {
        reject(error as Error);
      }
    });
    req.on('error', reject);
  });
}
