// ESLint rule for test code: no fixed sleep followed by whatever comes next (an assertion, as a rule).
// A test that sleeps 50 ms and then asserts fails on a loaded machine and wastes time on an idle one;
// it waits for the event, row, file or output instead (eventually() in src/test-support), or uses fake
// timers where time is the subject. A sleep inside a loop is a poll and is left alone. Where time
// itself is what a test checks, the line is disabled with the reason:
//   // eslint-disable-next-line sage/no-fixed-sleep -- <why time is the subject here>

const TIMER_NAMES = new Set(['setTimeout', 'setImmediate']);
const SLEEP_NAMES = new Set(['sleep', 'delay', 'wait', 'pause']);
const LOOPS = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement']);
const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** `new Promise((r) => setTimeout(r, n))` and its spellings (a block body, `resolve`, `() => r()`). */
function isTimerPromise(node) {
  if (node.type !== 'NewExpression' || node.callee.type !== 'Identifier' || node.callee.name !== 'Promise') return false;
  const executor = node.arguments[0];
  if (!executor || !FUNCTIONS.has(executor.type)) return false;
  const resolve = executor.params[0];
  if (!resolve || resolve.type !== 'Identifier') return false;
  const body = executor.body.type === 'BlockStatement' ? executor.body.body : [{ type: 'ExpressionStatement', expression: executor.body }];
  if (body.length !== 1 || body[0].type !== 'ExpressionStatement') return false;
  const call = body[0].expression;
  if (call.type !== 'CallExpression' || call.callee.type !== 'Identifier' || !TIMER_NAMES.has(call.callee.name)) return false;
  const first = call.arguments[0];
  if (!first) return false;
  if (first.type === 'Identifier') return first.name === resolve.name;
  // () => r()
  return FUNCTIONS.has(first.type) && first.body.type === 'CallExpression' && first.body.callee.type === 'Identifier' && first.body.callee.name === resolve.name;
}

/** `sleep(50)`, `delay(50)`, `setTimeout(50)` from node:timers/promises, `scheduler.wait(50)`. */
function isSleepCall(node) {
  if (node.type !== 'CallExpression') return false;
  const callee = node.callee;
  if (callee.type === 'Identifier') return SLEEP_NAMES.has(callee.name) || (callee.name === 'setTimeout' && node.arguments.length <= 2 && node.arguments[0]?.type !== 'Identifier' && !FUNCTIONS.has(node.arguments[0]?.type));
  return callee.type === 'MemberExpression' && callee.property.type === 'Identifier' && callee.object.type === 'Identifier' && callee.object.name === 'scheduler' && callee.property.name === 'wait';
}

/** Inside a loop of the same function: a poll (it goes on until something holds), not a fixed wait. */
function inLoop(node) {
  for (let at = node.parent; at; at = at.parent) {
    if (LOOPS.has(at.type)) return true;
    if (FUNCTIONS.has(at.type)) return false;
  }
  return false;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid a fixed sleep in test code; wait for the event, row, file or output instead' },
    messages: {
      fixedSleep:
        'A fixed sleep in a test: wait for what it waits for (eventually() from src/test-support/eventually.ts, an event, a row, a file), or use fake timers. If time itself is the subject, disable this line and say why.',
    },
    schema: [],
  },
  create(context) {
    return {
      AwaitExpression(node) {
        const awaited = node.argument;
        if ((isTimerPromise(awaited) || isSleepCall(awaited)) && !inLoop(node)) context.report({ node, messageId: 'fixedSleep' });
      },
    };
  },
};
