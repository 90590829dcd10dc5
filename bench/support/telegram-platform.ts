/**
 * The Telegram side of bench/channels.ts (`--platform telegram`): the loopback fake Bot API the
 * adapter's tests use (src/channels/telegram/test-support/fake-bot-api.ts: the real wire format,
 * getUpdates long polling, HTML parse mode, callback queries), with the people in the chats. The
 * server runs the real Telegram adapter (grammY, long polling) pointed at it by `apiRoot`, so a tap
 * travels as on Telegram: a callback_query update handed to the bot's waiting getUpdates, then the
 * adapter's answerCallbackQuery once the core took the answer.
 */
import { FakeBotApi } from '../../src/channels/telegram/test-support/fake-bot-api.js';

/** A bot token of the shape @BotFather hands out (the adapter checks only that it is set). */
export const BENCH_TELEGRAM_TOKEN = '123456789:bench-token_AAAAAAAAAAAAAAAAAAAAAAAAAA';

interface Prompt {
  messageId: number;
  command: string;
}

/** Bot API calls that are Sage talking to the chats (getUpdates is the adapter listening). */
const SENDS = new Set(['sendMessage', 'editMessageText', 'editMessageReplyMarkup', 'answerCallbackQuery', 'sendChatAction']);

export class TelegramPlatform {
  private fake!: FakeBotApi;
  /** How many of fake.messages were looked at for prompts and "done". */
  private scanned = 0;
  private readonly prompts = new Map<string, Prompt>();
  readonly done = new Set<string>();

  async listen(): Promise<void> {
    this.fake = await new FakeBotApi(BENCH_TELEGRAM_TOKEN).listen();
  }

  /** What the server's `channels.telegram.apiRoot` is set to. */
  get url(): string {
    return this.fake.apiRoot;
  }

  /** Calls Sage made to send, edit or answer (not getUpdates). */
  get posts(): number {
    return this.fake.calls.filter((c) => SENDS.has(c.method)).length;
  }

  get promptCount(): number {
    this.scan();
    return this.prompts.size;
  }

  get doneCount(): number {
    this.scan();
    return this.done.size;
  }

  /** The person of private chat `id` writes `text` (chat id = user id, as in a private chat). */
  say(id: string, text: string): void {
    this.fake.userSays(id, { id: Number(id), username: `person${id}` }, text);
  }

  /** Taps "once" on the approval in chat `id`; resolves when the bot answered the callback query. */
  async tap(id: string): Promise<void> {
    const prompt = this.prompts.get(id);
    if (!prompt) throw new Error(`telegram bench: no approval with a "once" button reached chat ${id}`);
    await this.fake.waitForCallbackAnswer(this.fake.userTaps(id, prompt.messageId, prompt.command, { id: Number(id), username: `person${id}` }));
  }

  /** Resolves when `check` holds (re-checked every 20 ms), or rejects after `ms`. */
  async until(check: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): Promise<void> {
    return this.fake.close();
  }

  /** New messages only: an approval's "once" button (its callback_data is the typed command), and the run's final "done". */
  private scan(): void {
    const messages = this.fake.messages;
    for (; this.scanned < messages.length; this.scanned++) {
      const m = messages[this.scanned]!;
      const once = m.firstButtons.find((b) => / once$/.test(b.callback_data));
      if (once) this.prompts.set(m.chatId, { messageId: m.messageId, command: once.callback_data });
      if (m.text.trim() === 'done') this.done.add(m.chatId);
    }
  }
}
