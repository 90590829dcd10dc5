import type { Command } from 'commander';

/** Wires the sub-commands that their own modules define. */
export function registerModuleCommands(_program: Command): void {}
