import { z } from 'zod';
import { parseRule } from '../permission/index.js';

/**
 * A permission rule as written, e.g. `Bash(npm test:*)` or `Read`. Shared by the server policy (its
 * settings lists) and the HTTP API (request bodies), so both accept exactly what the engine parses.
 */
export const ruleTextSchema = z
  .string()
  .min(1, 'a rule cannot be empty')
  .max(1_000, 'a rule is at most 1000 characters')
  .superRefine((rule, ctx) => {
    // The engine's own parser: a rule the API accepts is a rule the engine can apply.
    try {
      parseRule(rule);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });
