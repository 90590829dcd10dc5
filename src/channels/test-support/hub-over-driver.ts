import { serverGrant } from '../../runtime/web-gate.js';
import type { DurableRunDriver } from '../../server/durable-driver.js';
import type { Store } from '../../store/index.js';
import type { ChannelHubOptions } from '../hub.js';

/**
 * The part of a ChannelHub's options that wires it to a server's durable driver, as `sage serve`
 * does (runs built by the driver's factory, web-run metadata, the test's scripted model and folder).
 * Tests spread it and add their channels, log and timeouts.
 */
export function hubOverDriver(store: Store, driver: DurableRunDriver, model: () => string, cwd: string): Pick<ChannelHubOptions, 'store' | 'runner' | 'admitRun' | 'model' | 'cwd' | 'serverGrant'> {
  return {
    store,
    runner: driver.runner,
    admitRun: (request) => driver.factory.admitRun(request),
    model,
    cwd: () => cwd,
    serverGrant: () => serverGrant('user', driver.serverPolicy),
  };
}
