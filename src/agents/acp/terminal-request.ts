import { z } from 'zod';
import { formatZodError } from '../../errors/index.js';
import { commandLine, judgedCommand, VARIABLE_NAME } from '../judged-command.js';
import { insideFolders } from './folders.js';

const terminalRequestSchema = z.object({
  command: z.string().min(1, 'command is empty'),
  args: z.array(z.string()).nullish(),
  env: z.array(z.object({ name: z.string(), value: z.string() })).nullish(),
  cwd: z.string().nullish(),
});

/** What Sage runs for an agent's `terminal/create`, and the command line the gate judges for it. */
export type TerminalPlan =
  | { refused: string }
  | {
      /** The shell text the gate judges and the person sees: folder, variables, program, arguments. */
      judged: string;
      program: string;
      args: string[];
      cwd: string;
      env: Record<string, string>;
    };

/**
 * An ACP `terminal/create` as Sage will run it. The environment and folder the agent names are part
 * of the call: each variable that differs from what the terminal would inherit is written into the
 * judged command (`PATH=/x ls`), and a folder other than the session's as a `cd` before it, so the
 * gate judges (and the person sees) what will run. A folder outside the session's folders, or a
 * variable name no shell could set (and so no rule could see), is refused without asking.
 */
export function planTerminal(params: unknown, session: { cwd: string; folders: readonly string[]; inherited: Readonly<Record<string, string>> }): TerminalPlan {
  const parsed = terminalRequestSchema.safeParse(params);
  if (!parsed.success) return { refused: `terminal/create: ${formatZodError(parsed.error)}` };
  const { command, args, env, cwd: asked } = parsed.data;
  const cwd = asked ?? session.cwd;
  if (!insideFolders(cwd, session.folders)) return { refused: `${cwd} is outside the session's folders (${session.folders.join(', ')}): refused.` };
  const added: Record<string, string> = {};
  for (const { name, value } of env ?? []) {
    if (!VARIABLE_NAME.test(name)) return { refused: `The environment variable name ${JSON.stringify(name)} is not one a shell can set (letters, digits and _, not starting with a digit), so Sage cannot judge it: refused.` };
    // Later entries win, as they do for the spawned process.
    delete added[name];
    // A value the terminal inherits anyway changes nothing about what runs.
    if (session.inherited[name] !== value) added[name] = value;
  }
  const argv = args ?? [];
  return {
    judged: judgedCommand(commandLine([command, ...argv]), { cwd, sessionCwd: session.cwd, env: added }),
    program: command,
    args: argv,
    cwd,
    env: { ...session.inherited, ...added },
  };
}
