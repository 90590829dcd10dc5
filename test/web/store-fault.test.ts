import { describe, expect, it } from 'vitest';
import { ApiError } from '../../web/src/api.js';
import { storeFaultText } from '../../web/src/components/StoreFaultBanner.js';
import { describeKeptAnswer, storeFaultOf } from '../../web/src/store-fault.js';

// The words of the store-fault banner (test/browser/store-fault-banner.test.ts shows it in use).
describe('storeFaultOf', () => {
  it('is the code of a 503 that names the store, and nothing else', () => {
    expect(storeFaultOf(new ApiError(503, 'store_unavailable', 'x'))).toBe('store_unavailable');
    expect(storeFaultOf(new ApiError(503, 'disk_full', 'x'))).toBe('disk_full');
    // Not a store fault: shutting down, the same code on another status, a network failure.
    expect(storeFaultOf(new ApiError(503, 'shutting_down', 'x'))).toBeUndefined();
    expect(storeFaultOf(new ApiError(500, 'store_unavailable', 'x'))).toBeUndefined();
    expect(storeFaultOf(new TypeError('Failed to fetch'))).toBeUndefined();
  });
});

describe('storeFaultText', () => {
  it('says what failed, that the answer is kept, and what to do', () => {
    expect(storeFaultText({ code: 'store_unavailable', back: false }, 'answer')).toBe('The store is unavailable; your answer was kept, send it again (safe: an answer is never recorded twice).');
    expect(storeFaultText({ code: 'disk_full', back: false }, 'answer')).toBe("The server's disk is full, so nothing could be saved: your answer was kept; send it again once space is freed (safe: an answer is never recorded twice).");
    expect(storeFaultText({ code: 'disk_full', back: true }, 'message')).toBe('The store is back, but nothing was sent yet: your message was kept; send it again.');
    expect(storeFaultText({ code: 'store_unavailable', back: false }, 'run')).toBe('The store is unavailable; the run could not start; your task was kept, start it again.');
  });
});

describe('describeKeptAnswer', () => {
  it('names the choice the person made, so "Send again" sends nothing unseen', () => {
    expect(describeKeptAnswer({ kind: 'confirm', confirmed: true, remember: 'once' })).toBe('allow once');
    expect(describeKeptAnswer({ kind: 'confirm', confirmed: true, remember: 'session' })).toBe('allow always, for this run');
    expect(describeKeptAnswer({ kind: 'confirm', confirmed: true, updatedInput: { command: 'ls' } })).toBe('allow your edited version');
    expect(describeKeptAnswer({ kind: 'confirm', confirmed: false, message: 'use  staging\ninstead' })).toBe('deny, saying “use staging instead”');
    expect(describeKeptAnswer({ kind: 'input', text: 'x'.repeat(200) })).toBe(`“${'x'.repeat(79)}…”`);
    expect(describeKeptAnswer({ kind: 'select', selected: ['a', 'b'] })).toBe('“a”, “b”');
  });
});
