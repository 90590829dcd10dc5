import { SageError } from '../errors/index.js';

/** A channel's config does not validate or names a missing secret; `field` is the dotted path (`channels.telegram.tokenEnv`). */
export class ChannelConfigError extends SageError {
  constructor(
    readonly field: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('channel_config', `${field}: ${message}`, options);
  }
}

/** The platform could not be reached at start (wrong token, wrong apiRoot, network down). */
export class ChannelUnavailableError extends SageError {
  constructor(
    readonly channel: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('channel_unavailable', `${channel}: ${message}`, options);
  }
}

/** A send or edit failed after its retries; the interaction it carried stays answerable elsewhere. */
export class ChannelSendError extends SageError {
  constructor(
    readonly channel: string,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super('channel_send_failed', `${channel}: ${message}`, options);
  }
}
