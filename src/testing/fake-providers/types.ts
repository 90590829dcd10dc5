import type { IncomingHttpHeaders } from 'node:http';

/** A tool call the fake model makes. Give `input` (sent as JSON) or `arguments` (sent verbatim, e.g. malformed JSON). */
export interface FakeToolCall {
  id?: string;
  name: string;
  input?: unknown;
  arguments?: string;
}

export interface FakeUsage {
  inputTokens: number;
  outputTokens: number;
}

/** A successful, streamed reply. */
export interface FakeReply {
  /** The text, streamed as one delta per array element. */
  text?: string | readonly string[];
  toolCalls?: readonly FakeToolCall[];
  /** Defaults to an estimate from the request and reply sizes (characters / 4). */
  usage?: FakeUsage;
  /** `length` reports that the output limit was hit; otherwise derived from the tool calls. */
  finish?: 'stop' | 'length';
  /** Stops the response after this many SSE events (0: right after the headers). */
  cutAfterEvents?: number;
  /** `destroy` resets the socket mid-body (default); `end` closes the body cleanly but early. */
  cutMode?: 'destroy' | 'end';
  /** Pause between events, ms, to let a test observe streaming or abort mid-stream. */
  eventDelayMs?: number;
}

/** An HTTP error answer in the provider's own error format. */
export interface FakeHttpError {
  status: number;
  message?: string;
  /** e.g. `{ 'retry-after': '2' }` or `{ 'retry-after-ms': '150' }`. */
  headers?: Record<string, string>;
}

export type FakeTurn = FakeReply | FakeHttpError;

export interface RecordedRequest {
  method: string;
  /** The path the provider package requested, e.g. `/v1/messages`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body. */
  body: any;
}

/** A turn, or a function that builds it from the request (to answer based on what was sent). */
export type FakeTurnSource = FakeTurn | ((request: RecordedRequest) => FakeTurn);

export interface SseEvent {
  event?: string;
  data: string;
}

/** What one provider's wire format needs from the shared server. */
export interface WireFormat {
  /** The request path under the server root, e.g. `/v1/messages`. */
  path: string;
  isAuthorized(headers: IncomingHttpHeaders, apiKey: string): boolean;
  errorBody(status: number, message: string | undefined): unknown;
  events(reply: FakeReply, request: RecordedRequest, ids: IdSource): SseEvent[];
  /** Raw text written after the last event (Chat Completions' `data: [DONE]`). */
  terminator?: string;
}

/** Deterministic ids per server, so tests can assert on them. */
export interface IdSource {
  next(prefix: string): string;
}
