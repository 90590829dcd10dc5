import type { ChannelAdapter, ChannelCommonConfig } from '../../adapter.js';
import type { ChannelTestHarness, ChatUser, SeenMessage } from '../../test-harness.js';
import { WhatsappAdapter } from '../adapter.js';
import { whatsappConfigSchema } from '../config.js';
import { FakeWhatsapp } from './fake-whatsapp.js';

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * The contract-suite harness for WhatsApp: the real adapter against the fake Graph API, with
 * inbound deliveries signed as Meta signs them and handed to the adapter's webhook route (which
 * answers only after the core is done). WhatsApp Cloud API chats are one-to-one: the chat is the
 * person, so `userSays` requires `chatId` to be the sender's id. Messages are never edited on
 * WhatsApp; an edit shows up as a new message quoting the prompt.
 */
export async function makeWhatsappHarness(): Promise<ChannelTestHarness> {
  const secrets = { token: 'wa-contract', appSecret: 'wa-app-secret', phoneNumberId: '1098765432' };
  const fake = await new FakeWhatsapp(secrets).listen();
  const env = { WHATSAPP_TOKEN: secrets.token, WHATSAPP_APP_SECRET: secrets.appSecret, WHATSAPP_VERIFY_TOKEN: 'wa-verify' };
  let current: WhatsappAdapter | undefined;
  const deliver = async (body: Record<string, unknown>) => {
    const route = current?.routes.find((r) => r.method === 'POST');
    if (!route) throw new Error('fake whatsapp: no adapter made yet');
    const response = await route.handle(fake.signedRequest(`http://sage.test${route.path}`, body));
    if (response.status !== 200) throw new Error(`fake whatsapp: the webhook answered ${response.status}`);
  };

  return {
    makeAdapter(common: ChannelCommonConfig): ChannelAdapter {
      current = new WhatsappAdapter(whatsappConfigSchema.parse({ ...common, phoneNumberId: secrets.phoneNumberId, graphApiRoot: fake.root }), { env, log: quiet }, { sleep: async () => {} });
      return current;
    },
    async userSays(chatId: string, text: string, from: ChatUser) {
      if (chatId !== from.senderId) throw new Error('whatsapp: a Cloud API chat is one-to-one; the chat id is the sender id');
      await deliver(fake.textFrom(from.senderId, text, from.senderName));
    },
    async userTaps(shortId: string, option: string, from: ChatUser) {
      for (const message of fake.messages) {
        const button = message.buttons.find((b) => {
          const [, id, value] = b.id.trim().split(/\s+/);
          return id === shortId && value === option;
        });
        if (button) {
          await deliver(fake.tapFrom(from.senderId, message.messageId, button.id, button.title, from.senderName));
          return;
        }
      }
      throw new Error(`fake whatsapp: no message ever carried a button for ${shortId} ${option}`);
    },
    lastMessages(chatId: string): SeenMessage[] {
      return fake.messagesTo(chatId).map((m) => ({ messageId: m.messageId, text: m.text, buttons: m.buttons.map((b) => ({ label: b.title, command: b.id })), edited: false }));
    },
    async close() {
      await current?.stop();
      await fake.close();
    },
  };
}
