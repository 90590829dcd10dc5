import type { ChannelAdapter, ChannelCommonConfig } from '../../adapter.js';
import type { ChannelTestHarness, ChatUser, SeenMessage } from '../../test-harness.js';
import { FeishuAdapter } from '../adapter.js';
import { feishuConfigSchema } from '../config.js';
import { FakeFeishu } from './fake-feishu.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * The contract-suite harness for Feishu/Lark: the real adapter in webhook mode against the fake
 * Open API, with encrypted, signed deliveries handed to its event route. (The long connection
 * speaks protobuf frames and is not faked; both modes share the same event handlers.)
 */
export async function makeFeishuHarness(): Promise<ChannelTestHarness> {
  const creds = { appId: 'cli_0123456789abcdef', appSecret: 'fs-secret', verificationToken: 'fs-vtoken', encryptKey: 'fs-ekey' };
  const fake = await new FakeFeishu(creds).listen();
  const env = { FEISHU_APP_ID: creds.appId, FEISHU_APP_SECRET: creds.appSecret, FEISHU_VERIFICATION_TOKEN: creds.verificationToken, FEISHU_ENCRYPT_KEY: creds.encryptKey };
  let current: FeishuAdapter | undefined;
  const deliver = async (envelope: Record<string, unknown>) => {
    const route = current?.routes[0];
    if (!route) throw new Error('fake feishu: no adapter made yet');
    const response = await route.handle(fake.eventRequest(`http://sage.test${route.path}`, envelope));
    if (response.status !== 200) throw new Error(`fake feishu: the event endpoint answered ${response.status}`);
  };

  return {
    makeAdapter(common: ChannelCommonConfig): ChannelAdapter {
      const config = feishuConfigSchema.parse({ ...common, domain: fake.domain, mode: 'webhook', verificationTokenEnv: 'FEISHU_VERIFICATION_TOKEN', encryptKeyEnv: 'FEISHU_ENCRYPT_KEY' });
      current = new FeishuAdapter(config, { env, log: quiet }, { sleep: async () => {} });
      return current;
    },
    userSays: (chatId: string, text: string, from: ChatUser) => deliver(fake.messageEvent(chatId, from.senderId, text)),
    async userTaps(shortId: string, option: string, from: ChatUser) {
      for (const message of fake.messages) {
        const button = message.firstButtons.find((b) => {
          const [, id, value] = b.command.trim().split(/\s+/);
          return id === shortId && value === option;
        });
        if (button) {
          await deliver(fake.tapEvent(message.messageId, button.command, from.senderId));
          return;
        }
      }
      throw new Error(`fake feishu: no message ever carried a button for ${shortId} ${option}`);
    },
    lastMessages(chatId: string): SeenMessage[] {
      return fake.messagesIn(chatId).map((m) => ({ messageId: m.messageId, text: m.text, buttons: m.buttons, edited: m.edited }));
    },
    async close() {
      await current?.stop();
      await fake.close();
    },
  };
}
