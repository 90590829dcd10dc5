import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeHttpError, FakeReply, FakeTurn, FakeTurnSource, IdSource, RecordedRequest, WireFormat } from './types.js';

export interface FakeProviderServerOptions {
  /** When set, requests must carry this key (the provider's own header) or get the provider's 401. */
  apiKey?: string;
  /** Answers requests once the queue is empty; without it they get a 400 naming the problem. */
  whenEmpty?: FakeTurnSource;
}

/**
 * A loopback HTTP server (127.0.0.1, a free port) that answers a provider's endpoints in the
 * provider's wire format, one scripted turn per request, in order. Every request is recorded
 * with its parsed JSON body so a test can check what the provider package actually sent.
 */
export class FakeProviderServer {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeTurnSource[] = [];
  private readonly counters = new Map<string, number>();
  private readonly ids: IdSource = {
    next: (prefix) => {
      const n = (this.counters.get(prefix) ?? 0) + 1;
      this.counters.set(prefix, n);
      return `${prefix}${n}`;
    },
  };

  private readonly server: Server;
  private baseUrl = '';

  private constructor(
    private readonly wires: readonly WireFormat[],
    private readonly options: FakeProviderServerOptions,
  ) {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`fake provider server failed: ${error instanceof Error ? error.message : String(error)}`);
      });
    });
  }

  static async start(wires: readonly WireFormat[], options: FakeProviderServerOptions = {}): Promise<FakeProviderServer> {
    const instance = new FakeProviderServer(wires, options);
    await new Promise<void>((resolve, reject) => {
      instance.server.once('error', reject);
      instance.server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = instance.server.address() as AddressInfo;
    instance.baseUrl = `http://127.0.0.1:${port}/v1`;
    return instance;
  }

  /** The base URL to give the provider package, ending in `/v1`. */
  get url(): string {
    return this.baseUrl;
  }

  /** Queues the answers to the next requests, in order. */
  enqueue(...turns: FakeTurnSource[]): this {
    this.queue.push(...turns);
    return this;
  }

  /** Turns queued and not yet served. */
  get pendingTurns(): number {
    return this.queue.length;
  }

  /** The last request received; throws when there was none, so a test fails where it should. */
  lastRequest(): RecordedRequest {
    const last = this.requests[this.requests.length - 1];
    if (!last) throw new Error('The fake provider server has received no request.');
    return last;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const wire = this.wires.find((w) => w.path === path && req.method === 'POST');
    const raw = await readBody(req);
    if (!wire) {
      sendJson(res, 404, { error: { message: `The fake provider server does not serve ${req.method} ${path}.` } });
      return;
    }
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      sendJson(res, 400, wire.errorBody(400, 'The request body is not valid JSON.'));
      return;
    }
    const request: RecordedRequest = { method: req.method ?? 'POST', path, headers: req.headers, body };
    this.requests.push(request);

    if (this.options.apiKey !== undefined && !wire.isAuthorized(req.headers, this.options.apiKey)) {
      sendJson(res, 401, wire.errorBody(401, undefined));
      return;
    }
    const source = this.queue.shift() ?? this.options.whenEmpty;
    if (source === undefined) {
      // A 400, not a 5xx: recovery must not retry a test's missing script into a timeout.
      sendJson(res, 400, wire.errorBody(400, `The fake provider server has no scripted turn left for request #${this.requests.length}.`));
      return;
    }
    const turn: FakeTurn = typeof source === 'function' ? source(request) : source;
    if (isHttpError(turn)) {
      sendJson(res, turn.status, wire.errorBody(turn.status, turn.message), turn.headers);
      return;
    }
    await this.stream(res, wire, turn, request);
  }

  private async stream(res: ServerResponse, wire: WireFormat, reply: FakeReply, request: RecordedRequest): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    const events = wire.events(reply, request, this.ids);
    for (let index = 0; index < events.length; index++) {
      if (reply.cutAfterEvents === index) {
        cut(res, reply.cutMode ?? 'destroy');
        return;
      }
      if (reply.eventDelayMs) await delay(reply.eventDelayMs);
      if (res.destroyed) return;
      const event = events[index]!;
      await write(res, `${event.event ? `event: ${event.event}\n` : ''}data: ${event.data}\n\n`);
    }
    if (reply.cutAfterEvents !== undefined && reply.cutAfterEvents >= events.length) {
      cut(res, reply.cutMode ?? 'destroy');
      return;
    }
    if (wire.terminator) await write(res, wire.terminator);
    res.end();
  }
}

function isHttpError(turn: FakeTurn): turn is FakeHttpError {
  return typeof (turn as FakeHttpError).status === 'number';
}

/** `destroy` resets the connection mid-body, so the client sees the chunked body break off. */
function cut(res: ServerResponse, mode: 'destroy' | 'end'): void {
  if (mode === 'end') res.end();
  else res.socket?.destroy();
}

/** Resolves once the chunk is handed to the socket, so a following cut never overtakes it. */
function write(res: ServerResponse, chunk: string): Promise<void> {
  return new Promise((resolve) => res.write(chunk, () => resolve()));
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake_${status}`, ...headers });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
