import type { ChannelAdapter, ChannelCommonConfig, InboundMessage, InboundResult, InboundSink } from '../../adapter.js';
import type { ChannelTestHarness, ChatUser, SeenMessage } from '../../test-harness.js';
import { TelegramAdapter } from '../adapter.js';
import { telegramConfigSchema } from '../config.js';
import { FakeBotApi, type FakeUser } from './fake-bot-api.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
export const CONTRACT_TOKEN = '123456789:contract-token_AAAA';

function userOf(from: ChatUser): FakeUser {
  return { id: Number(from.senderId), ...(from.senderName !== undefined ? { username: from.senderName } : {}) };
}

/** `/approve k3f9 once` carries option `once` of `k3f9`; so does `/answer k3f9 2` for option `2`. */
function commandMatches(command: string, shortId: string, option: string): boolean {
  const [, id, value] = command.trim().split(/\s+/);
  return id === shortId && value === option;
}

/**
 * The contract-suite harness for Telegram: the real adapter (grammY, long polling) against the
 * loopback fake Bot API. An update is picked up by the adapter's next getUpdates, so `userSays`
 * resolves once as many sink calls have finished as updates were delivered, and `userTaps` once the
 * adapter answered the tap's callback query (after the core returned), so concurrent taps each wait
 * for their own answer.
 */
export async function makeTelegramHarness(): Promise<ChannelTestHarness> {
  const fake = await new FakeBotApi(CONTRACT_TOKEN).listen();
  const env = { TELEGRAM_BOT_TOKEN: CONTRACT_TOKEN };
  let finished = 0;
  /** Deliveries made: the n-th one is done once n sink calls have finished (a chat's updates are handled in order). */
  let delivered = 0;
  const waiters: { target: number; resolve: () => void }[] = [];
  const settle = () => {
    for (const w of [...waiters]) {
      if (finished >= w.target) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const handled = async (deliver: () => void): Promise<void> => {
    const target = ++delivered;
    const done = new Promise<void>((resolve) => waiters.push({ target, resolve }));
    deliver();
    settle();
    await done;
  };
  const adapters: ChannelAdapter[] = [];

  return {
    makeAdapter(common: ChannelCommonConfig): ChannelAdapter {
      const inner = new TelegramAdapter(telegramConfigSchema.parse({ ...common, apiRoot: fake.apiRoot }), { env, log: quiet }, { sleep: async () => {} });
      const adapter: ChannelAdapter = {
        specificationVersion: inner.specificationVersion,
        name: inner.name,
        limits: inner.limits,
        routes: inner.routes,
        start: (sink: InboundSink) =>
          inner.start(async (message: InboundMessage): Promise<InboundResult> => {
            try {
              return await sink(message);
            } finally {
              finished++;
              settle();
            }
          }),
        stop: () => inner.stop(),
        send: (message) => inner.send(message),
        edit: (ref, edit) => inner.edit(ref, edit),
      };
      adapters.push(adapter);
      return adapter;
    },
    userSays: (chatId: string, text: string, from: ChatUser) => handled(() => fake.userSays(chatId, userOf(from), text)),
    async userTaps(shortId: string, option: string, from: ChatUser) {
      for (const message of fake.messages) {
        const button = message.firstButtons.find((b) => commandMatches(b.callback_data, shortId, option));
        if (button) {
          // A tap is done when the adapter answers its callback query, which it does after the core returned.
          delivered++;
          await fake.waitForCallbackAnswer(fake.userTaps(message.chatId, message.messageId, button.callback_data, userOf(from)));
          return;
        }
      }
      throw new Error(`fake telegram: no message ever carried a button for ${shortId} ${option}`);
    },
    lastMessages(chatId: string): SeenMessage[] {
      return fake.messagesIn(chatId).map((m) => ({
        messageId: String(m.messageId),
        text: m.text,
        buttons: m.keyboard.flat().map((b) => ({ label: b.text, command: b.callback_data })),
        edited: m.edited,
      }));
    },
    async close() {
      await Promise.allSettled(adapters.map((a) => a.stop()));
      await fake.close();
    },
  };
}
