import type { ChannelAdapter, ChannelCommonConfig } from './adapter.js';

/**
 * What an adapter's fake platform gives the shared contract suite (`contract.ts`). Each adapter
 * writes one harness around its loopback fake server; the suite drives the core through it and
 * checks the same scenarios on every platform.
 *
 * Ids are strings of digits (`'1001'`, `'5001'`) so every platform can carry them as they are
 * (Telegram user and chat ids are numbers).
 */
export interface ChannelTestHarness {
  /**
   * A new adapter pointed at the fake platform, with the suite's common config (approvers, allowFrom,
   * timeouts) merged into the adapter's own. Called once per core start: a simulated server restart
   * calls it again against the same fake, which keeps its messages. `name` makes it a named instance
   * (`slack:A`: its channel id), for tests of several instances of one kind.
   */
  makeAdapter(common: ChannelCommonConfig, name?: string): ChannelAdapter;
  /**
   * A person writes `text` in chat `chatId`. Resolves once the adapter has handed it to the core and
   * the core has finished with it (the sink's promise resolved).
   */
  userSays(chatId: string, text: string, from: ChatUser): Promise<void>;
  /**
   * A person taps the button with option `option` (`once`, `always`, `deny`, or a question's
   * option value) on the message that carried approval `shortId`, as that button was first sent:
   * a stale phone can still show (and tap) a button the bot has since removed. Resolves like
   * `userSays`. Rejects when no message ever carried such a button.
   */
  userTaps(shortId: string, option: string, from: ChatUser): Promise<void>;
  /** The chat's messages as the platform holds them now, oldest first, edits applied. */
  lastMessages(chatId: string): SeenMessage[];
  /** Stops the fake platform. */
  close(): Promise<void>;
}

export interface ChatUser {
  senderId: string;
  senderName?: string;
}

export interface SeenMessage {
  messageId: string;
  text: string;
  /** The buttons it shows now (none once answered or expired); `command` is what a tap sends. */
  buttons: { label: string; command: string }[];
  /** True once the bot edited it. */
  edited: boolean;
}

/** Builds a fresh fake platform and its harness for one test. */
export type MakeChannelHarness = () => Promise<ChannelTestHarness>;

/**
 * The approval prompt every adapter's harness test sends: two buttons, each carrying its command
 * (`/approve ab12 once`, `/approve ab12 deny`).
 */
export function sampleApproval(chatId: string) {
  return {
    chatId,
    text: 'Bash wants to run ls (/approve ab12 once|always|deny)',
    approval: {
      interactionId: 'ab12cdef',
      shortId: 'ab12',
      kind: 'approval' as const,
      title: 'Bash wants to run a command',
      options: [
        { value: 'once', label: 'Approve once', command: '/approve ab12 once' },
        { value: 'deny', label: 'Deny', command: '/approve ab12 deny' },
      ],
    },
  };
}
