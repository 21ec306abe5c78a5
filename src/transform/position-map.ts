/**
 * `PositionMap`: the original program position of a position in lowered code. It runs in the
 * worker, in the program's realm, whenever an error's stack is formatted, so it follows the
 * hostile-realm rule (see ARCHITECTURE.md): arithmetic and indexing only.
 */
import { RUN_FIELDS, RunKind, type SerializedPositions } from './positions.js'

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
    this.count = (data.runs.length - (data.runs.length % RUN_FIELDS)) / RUN_FIELDS
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
