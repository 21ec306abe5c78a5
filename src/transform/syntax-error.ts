/**
 * Syntax errors as the model should read them: the rule, the program's own line and column,
 * the offending line and a caret.
 */
import { LineIndex } from './line-index.js'

/** Longest slice of a source line quoted in a message; minified programs have huge lines. */
const QUOTE_WIDTH = 120

/**
 * A program that does not parse (or uses syntax a format forbids). `message` reads
 * `SyntaxError: <rule> (line L, column C)`, then the offending source line and a caret line;
 * `line` and `column` are 1-based positions in the program as written.
 */
export class ProgramSyntaxError extends Error {
  override name = 'SyntaxError'

  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message)
  }

  /** Build the error for 0-based `offset` of `source`. */
  static at(source: string, offset: number, rule: string): ProgramSyntaxError {
    const lines = new LineIndex(source)
    const clamped = Math.max(0, Math.min(offset, source.length))
    const line = lines.lineOf(clamped)
    const column = clamped - lines.lineStart(line)
    const { quoted, caretColumn } = quoteLine(lines.lineText(line), column)
    const caret = quoted.slice(0, caretColumn).replace(/[^\t]/g, ' ') + '^'
    const message = `SyntaxError: ${rule} (line ${line + 1}, column ${column + 1})\n${quoted}\n${caret}`
    return new ProgramSyntaxError(message, line + 1, column + 1)
  }
}

/** The part of a long line around `column`, and where the column falls in it. */
function quoteLine(text: string, column: number): { quoted: string; caretColumn: number } {
  if (text.length <= QUOTE_WIDTH) return { quoted: text, caretColumn: column }
  const start = Math.max(0, Math.min(column - QUOTE_WIDTH / 2, text.length - QUOTE_WIDTH))
  const end = start + QUOTE_WIDTH
  const prefix = start > 0 ? '…' : ''
  const suffix = end < text.length ? '…' : ''
  return { quoted: prefix + text.slice(start, end) + suffix, caretColumn: column - start + prefix.length }
}

/** Acorn's message without its ` (line:column)` suffix. */
export function acornRule(message: string): string {
  return message.replace(/ \(\d+:\d+\)$/, '')
}
