import type { ChannelAdapter, ChannelCommonConfig, InboundMessage, InboundResult, InboundSink } from '../../adapter.js';
import type { ChannelTestHarness, ChatUser, SeenMessage } from '../../test-harness.js';
import { SlackAdapter } from '../adapter.js';
import { slackConfigSchema } from '../config.js';
import { buttonsOf, FakeSlack } from './fake-slack.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * The contract-suite harness for Slack: the real adapter (Bolt, Socket Mode) against the loopback
 * fake. Slack acks an envelope before the core has handled it, so the harness also counts the
 * sink calls that finished, to resolve `userSays`/`userTaps` only once the core is done.
 */
export async function makeSlackHarness(): Promise<ChannelTestHarness> {
  const tokens = { botToken: 'xoxb-contract', appToken: 'xapp-contract' };
  const fake = await new FakeSlack(tokens).listen();
  const env = { SLACK_BOT_TOKEN: tokens.botToken, SLACK_APP_TOKEN: tokens.appToken };
  let finished = 0;
  const waiters: { target: number; resolve: () => void }[] = [];
  const settle = () => {
    for (const w of [...waiters]) {
      if (finished >= w.target) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const handled = async (deliver: () => Promise<void>): Promise<void> => {
    const done = new Promise<void>((resolve) => waiters.push({ target: finished + 1, resolve }));
    await deliver();
    await done;
  };
  const adapters: ChannelAdapter[] = [];

  return {
    makeAdapter(common: ChannelCommonConfig, name?: string): ChannelAdapter {
      const inner = new SlackAdapter(slackConfigSchema.parse({ ...common, slackApiUrl: fake.apiUrl }), { env, log: quiet, ...(name ? { name } : {}) }, { sleep: async () => {} });
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
    userSays: (chatId: string, text: string, from: ChatUser) => handled(() => fake.userSays(chatId, from.senderId, text)),
    async userTaps(shortId: string, option: string, from: ChatUser) {
      for (const message of fake.messages) {
        const button = message.firstButtons.find((b) => commandMatches(b.value, shortId, option));
        if (button) {
          await handled(() => fake.userTaps(message.channel, message.ts, button.value, { id: from.senderId, ...(from.senderName !== undefined ? { name: from.senderName } : {}) }));
          return;
        }
      }
      throw new Error(`fake slack: no message ever carried a button for ${shortId} ${option}`);
    },
    lastMessages(chatId: string): SeenMessage[] {
      return fake.messagesIn(chatId).map((m) => ({
        messageId: m.ts,
        text: m.blocks
          .filter((b) => b.type === 'section')
          .map((b) => String(b.text?.text ?? ''))
          .join(''),
        buttons: buttonsOf(m.blocks).map((b) => ({ label: b.text, command: b.value })),
        edited: m.edited,
      }));
    },
    async close() {
      await Promise.allSettled(adapters.map((a) => a.stop()));
      await fake.close();
    },
  };
}

/** `/approve k3f9 once` carries option `once` of `k3f9`; so does `/answer k3f9 2` for option `2`. */
export function commandMatches(command: string, shortId: string, option: string): boolean {
  const [, id, value] = command.trim().split(/\s+/);
  return id === shortId && value === option;
}
