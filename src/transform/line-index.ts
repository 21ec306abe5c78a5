/**
 * Line starts of a text, counted the way both acorn and V8 count them: `\r\n`, `\r`, `\n`,
 * U+2028 and U+2029 each end a line. Stack frames and syntax errors must agree with the parser
 * on what a line is, or every position after a `\r` would be off by one.
 */
const LINE_BREAK = /\r\n?|[\n\u2028\u2029]/g

/** Offsets at which each line of a text starts, with offset → 0-based line/column lookups. */
export class LineIndex {
  /** `starts[i]` is the offset of the first character of 0-based line `i`. */
  readonly starts: number[] = [0]

  constructor(readonly text: string) {
    LINE_BREAK.lastIndex = 0
    for (let match = LINE_BREAK.exec(text); match; match = LINE_BREAK.exec(text)) {
      this.starts.push(match.index + match[0].length)
    }
  }

  /** 0-based line containing `offset` (offsets past the end belong to the last line). */
  lineOf(offset: number): number {
    const starts = this.starts
    let low = 0
    let high = starts.length - 1
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (starts[middle]! <= offset) low = middle
      else high = middle - 1
    }
    return low
  }

  /** Offset of the first character of 0-based `line`. */
  lineStart(line: number): number {
    return this.starts[line] ?? this.text.length
  }

  /** Text of 0-based `line` without its terminator. */
  lineText(line: number): string {
    const start = this.lineStart(line)
    const next = this.starts[line + 1]
    const raw = next === undefined ? this.text.slice(start) : this.text.slice(start, next)
    return raw.replace(/(?:\r\n?|[\n\u2028\u2029])$/, '')
  }
}

const ANY_LINE_BREAK = /[\r\n\u2028\u2029]/

/** Number of line breaks in a short text (inserted code), counted as {@link LineIndex} does. */
export function countLineBreaks(text: string): { breaks: number; lastLineLength: number } {
  if (!ANY_LINE_BREAK.test(text)) return { breaks: 0, lastLineLength: text.length }
  let breaks = 0
  let lastStart = 0
  LINE_BREAK.lastIndex = 0
  for (let match = LINE_BREAK.exec(text); match; match = LINE_BREAK.exec(text)) {
    breaks++
    lastStart = match.index + match[0].length
  }
  return { breaks, lastLineLength: text.length - lastStart }
}
