import { RuleTester } from 'eslint';
import { describe, it } from 'vitest';
// @ts-expect-error -- a plain ESM rule module without types
import rule from './no-fixed-sleep.js';

RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const tester = new RuleTester({ languageOptions: { ecmaVersion: 2022, sourceType: 'module' } });
const inTest = (body: string) => `async function t() {\n${body}\n}`;
const error = [{ messageId: 'fixedSleep' }];

describe('sage/no-fixed-sleep', () => {
  tester.run('no-fixed-sleep', rule, {
    valid: [
      // Polls: the sleep is inside a loop that goes on until something holds.
      inTest('for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 10));'),
      inTest('while (!done()) { await new Promise((resolve) => setTimeout(resolve, 5)); }'),
      inTest('for (;;) { if (done()) return; await sleep(10); }'),
      // A timer that is not awaited, or a race with a deadline.
      inTest('const t = setTimeout(() => child.kill(), 1000);'),
      inTest('await Promise.race([started, new Promise((r) => setTimeout(r, 2000))]);'),
      // Something other than a timer in the promise.
      inTest('await new Promise((r) => server.close(r));'),
      inTest('await new Promise((r) => setImmediate(() => done(r)));'),
    ],
    invalid: [
      { code: inTest('await new Promise((r) => setTimeout(r, 50));\nexpect(x).toBe(1);'), errors: error },
      { code: inTest('await new Promise((resolve) => { setTimeout(resolve, 50); });'), errors: error },
      { code: inTest('await new Promise(function (done) { setTimeout(() => done(), 50); });'), errors: error },
      { code: inTest('await new Promise((r) => setImmediate(r));'), errors: error },
      { code: inTest('await sleep(50);'), errors: error },
      { code: inTest('await delay(50);'), errors: error },
      { code: `import { setTimeout } from 'node:timers/promises';\n${inTest('await setTimeout(50);')}`, errors: error },
      { code: inTest('await scheduler.wait(50);'), errors: error },
      // A loop around the function does not make the sleep inside it a poll.
      { code: inTest('for (const x of xs) await (async () => { await sleep(5); })();'), errors: error },
    ],
  });
});
