import { AgentConfigError } from './errors.js';
import type { AgentPreset } from './presets.js';

/**
 * Refuses a command line that carries a flag Sage sets itself or that would let the agent approve
 * its own tool calls (`--dangerously-skip-permissions`, `--yolo`, an allowlist, which settings or
 * MCP servers it reads). The program comes from the operator's settings or the person's
 * `--agent-command`; a later duplicate of Sage's flag might win or lose depending on the agent's
 * parser, so neither is left to chance: the run does not start, and the message says what to do.
 * Checked when the run is resolved and again when the agent starts (a stored run's command).
 */
export function refuseOwnedFlags(preset: AgentPreset, command: readonly string[]): void {
  for (const word of command.slice(1)) {
    const flag = word.startsWith('--') ? word.split('=', 1)[0]! : word;
    if (preset.ownedFlags.includes(flag)) {
      throw new AgentConfigError(
        `The ${preset.name} agent's command line has ${flag}, which Sage sets itself: the agent asks Sage for every tool call, reads its project's settings only in folders Sage trusts, and starts only the MCP servers Sage would start. Remove ${flag} from agents.${preset.name}.command/args or --agent-command (MCP servers go in "mcpServers" of Sage's settings or --mcp-config; folder trust: say yes when Sage asks whether to trust the folder).`,
      );
    }
  }
}
