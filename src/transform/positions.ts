/**
 * Positions in lowered code, as the lowering records them for mapping back to the program as
 * the model wrote it (the mapping itself is `PositionMap`, in position-map.ts, which runs in the
 * worker).
 *
 * The lowered code is a sequence of runs: wrapper text (ours, maps nowhere), verbatim program
 * text (maps column for column), and inserted glue (maps to the program position it was
 * inserted at, so a frame inside a declaration hook points at the declaration). One run per
 * edit keeps the map tiny even for a megabyte of program text: a program with no edits has
 * three runs, whatever its size.
 */

/** The file name lowered code is compiled under; mapped stack frames read `program.js:LINE:COL`. */
export const PROGRAM_FILENAME = 'program.js'

/**
 * The name lowered `code` gives itself in stack frames: `program.js?` and a 53-bit hash of the
 * code, so the same lowering always gets the same name (hosts may cache lowerings) and two runs
 * of one environment practically never share one.
 */
export function programFile(code: string): string {
  // Two 32-bit multiplicative lanes over the UTF-16 units, folded into 53 bits.
  let high = 0x811c9dc5
  let low = 0x01000193
  for (let index = 0; index < code.length; index++) {
    const unit = code.charCodeAt(index)
    high = Math.imul(high ^ unit, 0x01000193)
    low = Math.imul(low ^ unit, 0x5bd1e995)
  }
  const hash = (high >>> 0) * 0x200000 + ((low >>> 0) & 0x1fffff)
  return `${PROGRAM_FILENAME}?${hash.toString(36)}`
}

/** What a run of lowered code is. */
export const RunKind = {
  /** Wrapper code: positions here map to nothing. */
  Wrapper: 0,
  /** Program text copied verbatim: maps column for column. */
  Verbatim: 1,
  /** Inserted code: every position maps to the program position it was inserted at. */
  Anchored: 2,
} as const

/** Fields per run in {@link SerializedPositions.runs}. */
export const RUN_FIELDS = 5

/**
 * Plain JSON data describing where each run of lowered code came from; it crosses a
 * MessagePort. `file` is the name the lowered code gives itself in stack frames
 * (`program.js?<hash of the code>`, via a `//# sourceURL` comment), so frames of functions
 * declared by an earlier run of the same environment can be told apart and mapped with that
 * run's map. `runs` is a flat list of groups
 * `[generatedLine, generatedColumn, kind, originalLine, originalColumn]` (all 0-based), sorted
 * by generated position; a run extends to the start of the next one.
 */
export interface SerializedPositions {
  file: string
  runs: number[]
}
