import assert from 'node:assert/strict';
import { average, max, sum } from './src/stats.js';

const cases = [
  ['sum adds every value', () => assert.equal(sum([1, 2, 3]), 6)],
  ['average of 2, 4, 6 is 4', () => assert.equal(average([2, 4, 6]), 4)],
  ['average of an empty list is 0', () => assert.equal(average([]), 0)],
  ['max finds the largest value', () => assert.equal(max([3, 9, 2]), 9)],
];

let failed = 0;
for (const [name, check] of cases) {
  try {
    check();
    console.log(`ok   ${name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}: ${error.message.split('\n')[0]}`);
  }
}
console.log(`${cases.length - failed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
