/**
 * A Sage process for tests that kill it: runs one Bash tool call (the command in argv[2], in the
 * folder argv[3]) and says `started` once the call is under way, then waits to be killed.
 */
import { createBashTool } from '../bash.js';
import { createTestContext } from './context.js';

const [command, cwd] = process.argv.slice(2);
if (!command || !cwd) throw new Error('usage: bash-in-a-child.ts COMMAND CWD');
void createBashTool().execute({ command }, createTestContext({ cwd }));
process.stdout.write('started\n');
setInterval(() => {}, 1_000);
