import type { AskContext } from '../runtime/ask-context.js';
import { z } from 'zod';
import { memorySeenIds, systemChannelClock, type ChannelClock, type SeenIds } from './seen-ids.js';
import { channelUsersSchema } from './identity.js';

/**
 * The channel adapter contract (version v1). An adapter connects one chat platform (Telegram,
 * Slack, Feishu/Lark, WhatsApp, a generic webhook) to the channel core: it delivers what people
 * type or tap as plain text, and it sends and edits messages. It decides nothing: which message
 * answers which approval, who may approve, and what a run does are the core's business, so every
 * platform behaves the same.
 *
 * A button press is delivered as the text command its button carries, `/approve <shortId>
 * once|always|deny`, exactly as if the person had typed it: taps and typed replies go through one
 * parser, and a platform without buttons loses nothing.
 */
export const CHANNEL_ADAPTER_VERSION = 'v1' as const;

/** What a person sent, as the core sees it. */
export interface InboundMessage {
  /** The adapter's name, its channel id (`telegram`, `slack:T123`, …): the channel in sessions, answers and the audit. */
  channel: string;
  /** The conversation (a DM or a group); with `threadId` it keys the session. */
  chatId: string;
  /** A thread inside the chat, where the platform has them (Slack thread_ts, Telegram topic). */
  threadId?: string;
  /** The platform's id of the sender: what `approvers` and `allowFrom` list. */
  senderId: string;
  /** A display name, for "approved by alice"; the id is used when absent. */
  senderName?: string;
  /** The text, or for a button press its command (`/approve k3f9 once`). */
  text: string;
  /** True when the text came from a button press rather than typing (for replies like a toast). */
  fromButton?: boolean;
  /**
   * For a button press: the message that carried the button, so the core can edit it (remove the
   * buttons, show the outcome) even after a restart, when it no longer remembers what it sent.
   */
  messageRef?: MessageRef;
}

/** What the core makes of an inbound message; an adapter may show `notice` as a toast for a button press. */
export interface InboundResult {
  /** approval: it answered an interaction; agent: queued for the run; notice: only a reply was sent; ignored: not allowed. */
  handled: 'approval' | 'agent' | 'notice' | 'ignored';
  /** A short text for the tapping person (already answered, expired, not an approver). */
  notice?: string;
}

/** The core's entry point an adapter calls for every message; it never throws. */
export type InboundSink = (message: InboundMessage) => Promise<InboundResult>;

/** One answer a button offers; `command` is the exact text a person could type instead. */
export interface ApprovalOption {
  /** `once`, `always`, `deny` for an approval; `1`…`n` for a question's options; `other` never (typed). */
  value: string;
  /** The button's label (adapters shorten it to their limit, e.g. WhatsApp 20 characters). */
  label: string;
  /** The text command the button sends, ≤ 64 bytes (Telegram's callback_data limit), e.g. `/approve k3f9 once`. */
  command: string;
  /** Primary / danger styling where the platform has it. A HIGH-risk approval has no primary. */
  style?: 'primary' | 'danger';
}

/** An interaction as a chat shows it: the same shape for every adapter. */
export interface RenderedApproval {
  /** The interaction id in the store. */
  interactionId: string;
  /** The short id people type (`/approve k3f9 …`); unique among what waits in this chat. */
  shortId: string;
  kind: 'approval' | 'question' | 'input';
  /** The tool asking, for an approval. */
  toolName?: string;
  /** A one-line title (`Bash wants to run a command`). */
  title: string;
  /** A short view of the input: the command, the path, a diff for edits; already truncated. */
  inputView?: string;
  risk?: 'low' | 'medium' | 'high';
  /** ISO time it expires, if it does. */
  expiresAt?: string;
  /** The task, folder, asker, risk and mode of the ask (its run's), when the run is known. */
  context?: AskContext;
  options: ApprovalOption[];
}

/** A message to post; `approval` adds its buttons. `text` is complete on its own (typed commands included). */
export interface OutboundMessage {
  chatId: string;
  threadId?: string;
  text: string;
  approval?: RenderedApproval;
}

/** Where a sent message lives, so it can be edited later (buttons removed, outcome shown). */
export interface MessageRef {
  chatId: string;
  threadId?: string;
  /** The platform's message id, as a string. */
  messageId: string;
}

/** A change to a sent message: new text; buttons kept only when `approval` is given again. */
export interface MessageEdit {
  text: string;
  approval?: RenderedApproval;
}

/** An HTTP route the adapter needs on `sage serve` (inbound webhooks), in web-standard Request/Response. */
export interface ChannelRoute {
  method: 'GET' | 'POST';
  /** Absolute path under the server, e.g. `/channels/webhook`. Never under the token-protected API prefixes. */
  path: string;
  /** Checks the request's own signature; the server adds no auth in front. */
  handle(request: Request): Promise<Response>;
}

/** What `start()` connected to, for the start-up log ("telegram: @sage_bot via https://api.telegram.org"). */
export interface ConnectedInfo {
  description: string;
}

/** Platform payload limits the core respects when rendering. */
export interface ChannelLimits {
  /** Most buttons on one message (WhatsApp reply buttons: 3). */
  maxButtons?: number;
  /** Longest button label, characters (WhatsApp: 20). */
  maxButtonLabel?: number;
  /** Longest message text, characters (Telegram: 4096). */
  maxText?: number;
}

export interface ChannelAdapter {
  readonly specificationVersion: typeof CHANNEL_ADAPTER_VERSION;
  /**
   * The channel id, unique per server: the kind (`telegram`, `slack`, …) for the bare `channels` key,
   * `kind:name` (`slack:T123`) for a named instance (`AdapterContext.name`).
   */
  readonly name: string;
  readonly limits: ChannelLimits;
  /** HTTP routes to mount on the server (empty for long polling / sockets). */
  readonly routes: readonly ChannelRoute[];
  /** Where it sends messages (the platform's API, or the relay's URL), for the server's start banner. */
  readonly outboundUrl?: string;
  /**
   * Connects (or checks the credentials) and begins delivering messages to `sink`. Rejects with a
   * ChannelConfigError / ChannelUnavailableError naming what failed; never resolves before the
   * adapter can send.
   */
  start(sink: InboundSink): Promise<ConnectedInfo>;
  /** Stops receiving; resolves when no more sink calls will be made. Idempotent. */
  stop(): Promise<void>;
  /**
   * Posts a message, retrying with backoff on 429 (retry-after) and on the platform being down;
   * rejects with ChannelSendError when it gives up (the approval stays answerable elsewhere).
   */
  send(message: OutboundMessage): Promise<MessageRef>;
  /** Edits a sent message (remove buttons, show the outcome); same retry rules as `send`. */
  edit(ref: MessageRef, edit: MessageEdit): Promise<void>;
}

/**
 * The config every adapter shares, extended by each adapter's own zod schema. Secrets are never
 * written in the config: an adapter names the environment variable (`tokenEnv`, `secretEnv`, …).
 */
export const channelCommonConfigSchema = z.object({
  /** Sender ids who may answer approvals. */
  approvers: z.array(z.string().min(1)).default([]).describe('Sender ids who may answer approvals'),
  /** Sender ids who may talk to the agent; defaults to the approvers. */
  allowFrom: z.array(z.string().min(1)).optional()
    .describe('Sender ids who may talk to the agent (default: the approvers)'),
  /**
   * Senders who are server users (`{ "<senderId>": "<server user>" }`): their chat runs and answers
   * are that user's. Anyone else is the principal `<channel>:<senderId>` (identity.ts).
   */
  users: channelUsersSchema.optional()
    .describe('{ "<senderId>": "<server user>" }: senders whose runs and answers are that user\'s'),
  /** With no approver configured, asks are denied (the only choice: a chat never auto-approves). */
  askFallback: z.literal('deny').default('deny').describe('With no approver configured, asks are denied'),
  /** The folder the chat's runs work in (must be one of the server's roots); default the first root. */
  cwd: z.string().min(1).optional()
    .describe('The folder the chat\'s runs work in, one of the server\'s roots (default: the first)'),
  /** An external agent (preset) does this chat's runs, e.g. `claude-code`; it must be one the server allows (`--agents`). */
  agent: z.string().min(1).max(64).optional().describe('An external agent the server allows does this chat\'s runs'),
  /** Seconds an approval waits in chat before it expires (default 1800: people are on their phones). */
  approvalTimeoutSeconds: z.number().int().min(5).max(7 * 24 * 3600).default(1800)
    .describe('Seconds an approval waits in the chat before it expires'),
  /** Seconds an "always" answer in this chat covers the same tool and input (the approval memory). */
  alwaysWindowSeconds: z.number().int().min(1).max(24 * 3600).default(300)
    .describe('Seconds an "always" answer in this chat covers the same tool and input'),
});
export type ChannelCommonConfig = z.infer<typeof channelCommonConfigSchema>;

/** The `<name>` of a `"<kind>:<name>"` channels key. */
export const CHANNEL_INSTANCE_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The kind of a channel id: `slack` for `slack` and for `slack:T123`. */
export function channelKind(channel: string): string {
  const colon = channel.indexOf(':');
  return colon < 0 ? channel : channel.slice(0, colon);
}

/**
 * A channel's config field as errors name it: `channels.slack.botTokenEnv` for the bare kind (as
 * before instances existed), `channels["slack:T123"].botTokenEnv` for a named one (a colon is not
 * an identifier, and the bracket form is what a person searches the JSON file for).
 */
export function channelField(channel: string, field?: string, source = 'channels'): string {
  const key = channel.includes(':') ? `["${channel}"]` : `.${channel}`;
  return `${source}${key}${field ? `.${field}` : ''}`;
}

/**
 * The path of a channel's inbound route: `/channels/<kind>` for the bare kind (the path that existed
 * before instances, so configured platforms keep working), `/channels/<kind>/<name>` for an instance.
 */
export function channelRoutePath(channel: string): string {
  const kind = channelKind(channel);
  return channel === kind ? `/channels/${kind}` : `/channels/${kind}/${channel.slice(kind.length + 1)}`;
}

/** What an adapter factory gets besides its validated config. */
export interface AdapterContext {
  /**
   * The channel id the adapter serves and reports in every message (its `name`): the kind, or
   * `kind:name` for a named instance (`slack:T123`). Absent means the kind.
   */
  name?: string;
  /** Where `*Env` names are looked up (process.env in `sage serve`). */
  env: NodeJS.ProcessEnv;
  /** A pino-style logger already bound to the channel name. */
  log: ChannelLogger;
  /**
   * Where the adapter records the delivery ids it took (signatures, update and event ids), so a
   * replay or redelivery is dropped: `sage serve` gives the store's, shared by restarts and by every
   * server over one database. Absent: the adapter's own memory (`seenIdsOf`).
   */
  seenIds?: SeenIds;
  /** The server's clock, for signing timestamps and expiries (a fake one in tests). Absent: Date.now. */
  clock?: ChannelClock;
}

/** The context's seen ids, or a memory of the adapter's own when none was given. */
export function seenIdsOf(ctx: AdapterContext): SeenIds {
  return ctx.seenIds ?? memorySeenIds(ctx.clock ?? systemChannelClock);
}

export interface ChannelLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

/** One adapter kind: the key under `channels`, its config schema, and how to build it. */
export interface ChannelAdapterFactory<S extends z.ZodType = z.ZodType> {
  /** The key in `channels` (`telegram`, or `telegram:<name>` for one of several), also the adapter's `name`. */
  readonly kind: string;
  /** The adapter's config schema: `channelCommonConfigSchema.extend({...}).strict()`. */
  readonly configSchema: S;
  /** Builds the adapter; reads secrets from `ctx.env` and throws ChannelConfigError naming the `*Env` field when one is missing. */
  create(config: z.infer<S>, ctx: AdapterContext): ChannelAdapter;
  /**
   * Config fields two instances of this kind may not share (after defaults), e.g. Slack's
   * `appTokenEnv`: two Socket Mode connections of one app split its events between them, and two
   * Telegram pollers of one token take each other's updates. Checked when the config is parsed.
   */
  readonly distinctFields?: readonly string[];
  /**
   * Defaults for a named instance, applied under what the operator wrote (e.g. its own
   * `webhookPath`, `/channels/<kind>/<name>`); the bare kind keeps the schema's defaults.
   */
  instanceDefaults?(channel: string): Record<string, unknown>;
}
