import type { z } from 'zod';

/** One line per problem, each naming the field path, for people and for models. */
export function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

/** The first failing field's path, for `{ error: { field } }` answers. */
export function firstZodField(error: z.ZodError): string | undefined {
  const issue = error.issues[0];
  return issue && issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
}
