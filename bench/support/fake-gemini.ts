/**
 * A minimal loopback Gemini API (v1beta) for bench/agents.ts: enough of `streamGenerateContent`
 * (SSE), `generateContent` and `countTokens` for Gemini CLI to run one shell call and finish.
 * `reply(contents)` picks the model's turn from the conversation; Gemini CLI's side requests (a JSON
 * answer asked through `generationConfig`) get a small JSON object.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface GeminiPart {
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown> };
  functionResponse?: { name: string; response: unknown };
}
export interface GeminiContent {
  role?: string;
  parts?: GeminiPart[];
}

export interface FakeGemini {
  url: string;
  close(): Promise<void>;
}

const SIDE_ANSWER = { reasoning: 'bench', next_speaker: 'user', model_choice: 'flash', complexity: 'simple' };

function body(request: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      try {
        resolve(JSON.parse(text || '{}') as Record<string, unknown>);
      } catch {
        resolve({});
      }
    });
  });
}

export async function startFakeGemini(reply: (contents: GeminiContent[]) => GeminiPart[]): Promise<FakeGemini> {
  const server: Server = createServer((request, response) => {
    void body(request).then((json) => {
      const url = request.url ?? '';
      if (url.includes(':countTokens')) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ totalTokens: 10 }));
        return;
      }
      const config = (json.generationConfig ?? {}) as Record<string, unknown>;
      const side = config.responseJsonSchema !== undefined || config.responseSchema !== undefined || config.responseMimeType === 'application/json';
      const parts = side ? [{ text: JSON.stringify(SIDE_ANSWER) }] : reply((json.contents ?? []) as GeminiContent[]);
      const frame = {
        candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      };
      if (url.includes(':streamGenerateContent')) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`data: ${JSON.stringify(frame)}\n\n`);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(frame));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
