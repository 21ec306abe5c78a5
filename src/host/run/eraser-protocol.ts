/** What the TypeScript eraser's thread (eraser-worker.ts) and the host (typescript-eraser.ts) say to each other. */

/** The states of the one cell of shared memory the host waits on. */
export const ERASER_SIGNAL = {
  /** The thread is loading SWC, or erasing a program. */
  busy: 0,
  /** SWC is loaded; no answer is waiting. */
  ready: 1,
  /** An answer is waiting on the port. */
  answered: 2,
} as const

/** One answer: the erased code, the eraser's own syntax error (with its position), a trap, or why SWC could not load. */
export type EraserReply = { code: string } | { syntax: object } | { trap: string } | { missing: string }
