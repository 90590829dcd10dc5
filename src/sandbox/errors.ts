import { SageError } from '../errors/index.js';

/** An external agent must run confined and this machine cannot confine it (no working bubblewrap). */
export class SandboxUnavailableError extends SageError {
  constructor(reason: string) {
    super(
      'sandbox_unavailable',
      `Sage runs every external agent in an OS sandbox, and none is available here: ${reason}. Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run the agent unconfined with --sandbox off (setting agents.<name>.sandbox: "off").`,
    );
  }
}
