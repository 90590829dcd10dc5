import { describe, expect, it } from 'vitest';
import { InteractionAlreadyAnsweredError, InteractionExpiredError } from '../interaction/index.js';
import { InvalidInputError, ModelError, SageError } from './index.js';

describe('SageError.isInstance', () => {
  it('recognises any Sage error from the base class', () => {
    expect(SageError.isInstance(new InvalidInputError('bad'))).toBe(true);
    expect(SageError.isInstance(new InteractionExpiredError('i1'))).toBe(true);
    expect(SageError.isInstance(new Error('plain'))).toBe(false);
    expect(SageError.isInstance(null)).toBe(false);
    expect(SageError.isInstance('invalid_input')).toBe(false);
  });

  it('recognises only its own class (and subclasses) from a subclass', () => {
    const expired = new InteractionExpiredError('i1');
    expect(InteractionAlreadyAnsweredError.isInstance(expired)).toBe(false);
    expect(InteractionExpiredError.isInstance(expired)).toBe(true);
    expect(InvalidInputError.isInstance(new ModelError('down'))).toBe(false);
    expect(ModelError.isInstance(new ModelError('down', { code: 'model_timeout' }))).toBe(true);
  });

  it('works across copies of the package (no instanceof)', () => {
    // What a second copy of the package would throw: same marker symbol, own class objects.
    const foreign = Object.assign(new Error('answered'), { [Symbol.for('sage-agent.error')]: ['InteractionAlreadyAnsweredError', 'SageError'], code: 'interaction_already_answered' });
    expect(InteractionAlreadyAnsweredError.isInstance(foreign)).toBe(true);
    expect(SageError.isInstance(foreign)).toBe(true);
    expect(InteractionExpiredError.isInstance(foreign)).toBe(false);
  });
});
