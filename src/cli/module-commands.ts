import type { Command } from 'commander';

/**
 * Sub-commands that their own modules define. Each pulls in its module (the server, the store),
 * so it is loaded only when the command line names it — or for help, which lists everything.
 */
const MODULES: Array<{ names: readonly string[]; register: (program: Command) => Promise<unknown> }> = [
  {
    names: ['permissions'],
    register: async (program) => {
      const { registerPermissionsCommand } = await import('./permissions-command.js');
      const { openUserPermissionStore } = await import('./open-user-store.js');
      registerPermissionsCommand(program, { userStore: await openUserPermissionStore() });
    },
  },
  {
    names: ['trust'],
    register: async (program) => (await import('./trust-command.js')).registerTrustCommand(program),
  },
  {
    names: ['runs', 'respond', 'interactions'],
    register: async (program) => (await import('./runs-command.js')).registerRunsCommands(program),
  },
  {
    names: ['skills', 'agents'],
    register: async (program) => (await import('./skills-command.js')).registerSkillsCommands(program),
  },
  {
    names: ['mcp'],
    register: async (program) => (await import('./mcp-command.js')).registerMcpCommand(program),
  },
  {
    names: ['serve'],
    register: async (program) => (await import('./serve-command.js')).registerServeCommand(program),
  },
];

/** Every command the modules add, for the unknown-command message (which loads none of them). */
export const MODULE_COMMANDS: readonly string[] = MODULES.flatMap((m) => m.names);

export async function registerModuleCommands(program: Command, argv: readonly string[]): Promise<void> {
  const words = argv.slice(2).filter((a) => !a.startsWith('-'));
  const wantsHelp = words.length === 0 || words[0] === 'help' || argv.includes('--help') || argv.includes('-h');
  for (const module of MODULES) {
    if (wantsHelp || module.names.includes(words[0] ?? '')) await module.register(program);
  }
}
