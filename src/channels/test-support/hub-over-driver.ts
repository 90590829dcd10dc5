import { webRunMetadata } from '../../runtime/web-gate.js';
import type { DurableRunDriver } from '../../server/durable-driver.js';
import type { Store } from '../../store/index.js';
import type { ChannelHubOptions } from '../hub.js';

/**
 * The part of a ChannelHub's options that wires it to a server's durable driver, as `sage serve`
 * does (runs built by the driver's factory, web-run metadata, the test's scripted model and folder).
 * Tests spread it and add their channels, log and timeouts.
 */
export function hubOverDriver(store: Store, driver: DurableRunDriver, model: () => string, cwd: string): Pick<ChannelHubOptions, 'store' | 'runner' | 'runSpecInput' | 'model' | 'cwd' | 'runMetadata'> {
  return {
    store,
    runner: driver.runner,
    runSpecInput: (task, run) => driver.factory.runSpecInput(task, run),
    model,
    cwd: () => cwd,
    runMetadata: () => webRunMetadata({ permissionMode: 'default', role: 'user' }, driver.serverPolicy) as Record<string, unknown>,
  };
}
