import { z } from 'zod';
import { channelCommonConfigSchema } from '../adapter.js';

/**
 * `channels.slack`: a Slack app in Socket Mode (no public URL). The bot token (`xoxb-`) posts and
 * edits messages; the app-level token (`xapp-`, scope `connections:write`) opens the socket.
 */
export const slackConfigSchema = channelCommonConfigSchema
  .extend({
    botTokenEnv: z.string().min(1).default('SLACK_BOT_TOKEN'),
    appTokenEnv: z.string().min(1).default('SLACK_APP_TOKEN'),
    /** The Web API base (a loopback fake in tests); Socket Mode's `apps.connections.open` goes here too. */
    slackApiUrl: z
      .string()
      .url()
      .default('https://slack.com/api/')
      // The Web API client joins method names onto this base, so it must end with a slash.
      .transform((url) => (url.endsWith('/') ? url : `${url}/`)),
  })
  .strict();

export type SlackConfig = z.infer<typeof slackConfigSchema>;
