/** What the TypeScript eraser's thread (eraser-worker.ts) and the host (typescript-eraser.ts) say to each other. */

/**
 * The states of the one cell of shared memory a host waiting blocked waits on (only the
 * initializer's eraser, initializer-eraser.ts, has one).
 */
export const ERASER_SIGNAL = {
  /** Nothing is waiting on the port. */
  waiting: 0,
  /** A message is waiting on the port. */
  posted: 1,
} as const

/**
 * The thread's first message: SWC is loaded (with the thread's id in this process, where Linux
 * tells it, so the host can read the CPU time it spends), or why it could not be.
 */
export type EraserLoad = { loaded: true; thread?: number } | { missing: string }

/** One answer: the erased code, the eraser's own syntax error (with its position), or a trap. */
export type EraserReply = { code: string } | { syntax: object } | { trap: string }
