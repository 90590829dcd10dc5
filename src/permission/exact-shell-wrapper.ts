import { analyzeCached } from './call-subject.js';
import { loadShellParser } from './shell-parser.js';

/**
 * The script of a command line that is exactly one shell wrapper (`/bin/bash -lc 'script'`, how
 * Codex sends every command), or the line itself. An agent that wraps each command this way is
 * judged (and shown) by the script its model wrote, as Sage's own Bash tool is. Anything else is
 * kept whole: more options, words after the script, a variable set for the shell, a shell named by
 * another path, a script only known when it runs, a redirection of the shell, a second command,
 * text that does not parse or hides characters.
 */
export async function withoutExactShellWrapper(command: string): Promise<string> {
  await loadShellParser();
  const analysis = analyzeCached(command);
  if (analysis.parseError || analysis.hiddenChars || analysis.tooLong || analysis.tooManyParts) return command;
  return analysis.wrapped?.script ?? command;
}
