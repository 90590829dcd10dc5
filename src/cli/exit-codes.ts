/** The CLI's exit codes; scripts depend on them. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  cancelled: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
