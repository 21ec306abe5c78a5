/**
 * Mapping positions in lowered code back to the program as the model wrote it.
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

/** A 1-based line and column, as V8 prints them in stack frames. */
export interface ProgramPosition {
  line: number
  column: number
}

/** Maps positions in lowered code to positions in the original program. */
export class PositionMap {
  /** The file name frames of this lowered program carry (`program.js?<hash>`). */
  readonly file: string
  private readonly runs: number[]
  private readonly count: number

  /** Rebuild a map from {@link SerializedPositions} (e.g. in the worker, after a MessagePort). */
  constructor(data: SerializedPositions) {
    this.file = data.file
    this.runs = data.runs
    this.count = Math.floor(data.runs.length / RUN_FIELDS)
  }

  /**
   * The original position of 1-based `line`/`column` in the lowered code, or `undefined` when
   * that position is wrapper code.
   */
  original(line: number, column: number): ProgramPosition | undefined {
    const generatedLine = line - 1
    const generatedColumn = column - 1
    const index = this.runAt(generatedLine, generatedColumn)
    if (index < 0) return undefined
    const base = index * RUN_FIELDS
    const runs = this.runs
    const kind = runs[base + 2]
    const runLine = runs[base]!
    const originalLine = runs[base + 3]!
    const originalColumn = runs[base + 4]!
    if (kind === RunKind.Anchored) return { line: originalLine + 1, column: originalColumn + 1 }
    if (kind !== RunKind.Verbatim) return undefined
    if (generatedLine === runLine) {
      return { line: originalLine + 1, column: originalColumn + generatedColumn - runs[base + 1]! + 1 }
    }
    // Later lines of a verbatim run start at column 0 in both texts.
    return { line: originalLine + generatedLine - runLine + 1, column }
  }

  /** Index of the last run starting at or before the position, or -1. */
  private runAt(line: number, column: number): number {
    const runs = this.runs
    let low = 0
    let high = this.count - 1
    let found = -1
    while (low <= high) {
      const middle = (low + high) >>> 1
      const runLine = runs[middle * RUN_FIELDS]!
      const startsBefore = runLine < line || (runLine === line && runs[middle * RUN_FIELDS + 1]! <= column)
      if (startsBefore) {
        found = middle
        low = middle + 1
      } else {
        high = middle - 1
      }
    }
    return found
  }
}

const POSITION = /(?<![\w$./\\-])program\.js(\?[0-9a-z]+)?:(\d+)(?::(\d+))?/g
const FRAME = /^\s*at /

/**
 * Rewrite every `program.js?<hash>:LINE:COLUMN` in a stack or message to `program.js:LINE:COLUMN`
 * of the original program. `map` is the current run's; pass the maps of the environment's
 * `earlier` runs too, so frames of functions those runs declared map with their own run's map
 * (frames name their run through the `//# sourceURL` of its code). A frame of a run with no map
 * keeps its function name and loses its meaningless position; an untagged `program.js:L:C`
 * (a stack formatted without source URLs) maps with `map`. Stack frames (`    at …`) that point
 * into wrapper code are dropped: they describe our plumbing, not the program. A bare
 * `program.js:LINE` (V8's compile-error header) maps its line.
 */
export function mapStackPositions(text: string, map: PositionMap, earlier: Iterable<PositionMap> = []): string {
  if (!text.includes(PROGRAM_FILENAME)) return text
  const byFile = new Map<string, PositionMap>()
  for (const candidate of earlier) byFile.set(candidate.file, candidate)
  byFile.set(map.file, map)
  const kept: string[] = []
  for (const line of text.split('\n')) {
    let wrapper = false
    const rewritten = line.replace(POSITION, (whole, tag: string | undefined, lineText: string, columnText?: string) => {
      const owner = tag === undefined ? map : byFile.get(PROGRAM_FILENAME + tag)
      if (!owner) return PROGRAM_FILENAME
      const position = owner.original(Number(lineText), columnText === undefined ? 1 : Number(columnText))
      if (!position) {
        wrapper = true
        return whole
      }
      return columnText === undefined
        ? `${PROGRAM_FILENAME}:${position.line}`
        : `${PROGRAM_FILENAME}:${position.line}:${position.column}`
    })
    if (wrapper && FRAME.test(line)) continue
    kept.push(rewritten)
  }
  return kept.join('\n')
}
