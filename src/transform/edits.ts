/**
 * The one text pass of a lowering: edits are recorded against offsets of the parsed text, then
 * applied in a single sweep that also records where every run of output came from.
 *
 * We keep our own edit list rather than magic-string because the position map needs exact runs:
 * where each verbatim run ends, and which program position each piece of inserted text belongs
 * to. magic-string's source maps cannot say either (measured with 0.30): inserted text gets no
 * segment of its own (it reads as part of the neighbouring verbatim run, or as nothing), and the
 * maps split lines only on `\n`, while JavaScript also ends a line at `\r`, U+2028 and U+2029,
 * so every position after such a break would be off. Exact runs could only come from its
 * undocumented chunk internals, which its 1.x line has changed.
 */
import { countLineBreaks, LineIndex } from './line-index.js'
import { RunKind } from './positions.js'

/** Order of edits at one offset: closings of the node before, openings of the node after, replacements. */
const CLOSE = 0
const OPEN = 1
const REPLACE = 2

interface Edit {
  start: number
  end: number
  text: string
  group: number
  sequence: number
}

type PreludePiece = string | { start: number; end: number }

/** The wrapper around the program; the program starts on the line after `open` and the prelude. */
export interface Wrapper {
  /** Wrapper text before the prelude; must not contain a line break. */
  open: string
  /** Wrapper text after the program; should start with a line break (trailing `//` comments). */
  close: string
}

/** Lowered code with its position runs (see `SerializedPositions.runs`). */
export interface EmittedCode {
  code: string
  runs: number[]
}

/**
 * Edits to one program, recorded against offsets of the parsed text (`text`), where the
 * program occupies `[programStart, programEnd)` and starts a line.
 */
export class ProgramEdits {
  private readonly edits: Edit[] = []
  private readonly prelude: PreludePiece[] = []
  private readonly lines: LineIndex
  private readonly firstLine: number

  constructor(
    readonly text: string,
    readonly programStart: number,
    readonly programEnd: number,
  ) {
    this.lines = new LineIndex(text)
    this.firstLine = this.lines.lineOf(programStart)
  }

  /**
   * Insert `text` before the original character at `offset`, after earlier openings there:
   * use it for code that belongs to the node starting at `offset`.
   */
  open(offset: number, text: string): void {
    this.edits.push({ start: offset, end: offset, text, group: OPEN, sequence: this.edits.length })
  }

  /**
   * Insert `text` at `offset` before any opening there and before earlier closings: use it for
   * code that belongs to the node ending at `offset`, so an inner node (visited later) closes
   * first.
   */
  close(offset: number, text: string): void {
    this.edits.push({ start: offset, end: offset, text, group: CLOSE, sequence: -this.edits.length })
  }

  /** Replace `[start, end)` with `text`; no other edit may fall strictly inside the range. */
  replace(start: number, end: number, text: string): void {
    this.edits.push({ start, end, text, group: REPLACE, sequence: this.edits.length })
  }

  /** Append wrapper code to the prelude, which runs before the program. */
  addPrelude(text: string): void {
    this.prelude.push(text)
  }

  /** Copy `[start, end)` of the program into the prelude verbatim (it keeps its positions). */
  hoist(start: number, end: number): void {
    this.prelude.push({ start, end })
  }

  /** Apply every edit: `open`, the prelude, a line break, the edited program, `close`. */
  emit(wrapper: Wrapper): EmittedCode {
    const output = new CodeOutput(this.lines, this.firstLine)
    output.wrapper(wrapper.open)
    for (const piece of this.prelude) {
      if (typeof piece === 'string') output.wrapper(piece)
      else output.verbatim(this.text, piece.start, piece.end)
    }
    output.wrapper('\n')
    const edits = this.edits.sort(compareEdits)
    let cursor = this.programStart
    for (const edit of edits) {
      output.verbatim(this.text, cursor, edit.start)
      output.anchored(edit.text, edit.start)
      if (edit.end > cursor) cursor = edit.end
    }
    output.verbatim(this.text, cursor, this.programEnd)
    output.wrapper(wrapper.close)
    return output.finish()
  }
}

function compareEdits(a: Edit, b: Edit): number {
  return a.start - b.start || a.group - b.group || a.sequence - b.sequence
}

/** Accumulates output text and its runs, tracking the generated line and column. */
class CodeOutput {
  private readonly parts: string[] = []
  private readonly runs: number[] = []
  private line = 0
  private column = 0
  private lastKind = -1
  private lastAnchor = -1

  constructor(
    private readonly lines: LineIndex,
    private readonly firstLine: number,
  ) {}

  wrapper(text: string): void {
    if (!text) return
    if (this.lastKind !== RunKind.Wrapper) this.startRun(RunKind.Wrapper, -1, -1)
    this.lastKind = RunKind.Wrapper
    this.advance(text)
  }

  anchored(text: string, offset: number): void {
    if (!text) return
    if (this.lastKind !== RunKind.Anchored || this.lastAnchor !== offset) {
      const line = this.lines.lineOf(offset)
      this.startRun(RunKind.Anchored, line - this.firstLine, offset - this.lines.lineStart(line))
    }
    this.lastKind = RunKind.Anchored
    this.lastAnchor = offset
    this.advance(text)
  }

  verbatim(source: string, start: number, end: number): void {
    if (end <= start) return
    const startLine = this.lines.lineOf(start)
    this.startRun(RunKind.Verbatim, startLine - this.firstLine, start - this.lines.lineStart(startLine))
    this.lastKind = RunKind.Verbatim
    this.parts.push(source.slice(start, end))
    const endLine = this.lines.lineOf(end)
    if (endLine === startLine) {
      this.column += end - start
    } else {
      this.line += endLine - startLine
      this.column = end - this.lines.lineStart(endLine)
    }
  }

  finish(): EmittedCode {
    return { code: this.parts.join(''), runs: this.runs }
  }

  private startRun(kind: number, originalLine: number, originalColumn: number): void {
    this.runs.push(this.line, this.column, kind, originalLine, originalColumn)
  }

  private advance(text: string): void {
    this.parts.push(text)
    const { breaks, lastLineLength } = countLineBreaks(text)
    if (breaks === 0) {
      this.column += text.length
    } else {
      this.line += breaks
      this.column = lastLineLength
    }
  }
}
