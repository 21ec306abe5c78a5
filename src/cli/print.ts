/**
 * How `ptc-run` shows a result: the program's output exactly as written, image entries as one
 * bracketed line each, then the completion value as JSON or the failure on standard error.
 */
import type { PtcJsonValue, PtcOutput, PtcRunResult } from '../seam/types.js'
import { jsonText } from '../json/text.js'
import { indentedJson } from '../tools/indented-json.js'

export interface Sink {
  write(text: string): unknown
}

/** Writes `result` for a person to read. */
export function printResult(result: PtcRunResult, out: Sink, err: Sink): void {
  let text = ''
  for (const entry of result.output) text += renderEntry(entry)
  const trailer = result.error ? `error (${result.error.kind}): ${result.error.message}\n` : result.value !== undefined ? `${valueText(result.value, err)}\n` : ''
  // A program that printed without a final newline must not run into what follows.
  if (trailer !== '' && text !== '' && !text.endsWith('\n')) text += '\n'
  if (text !== '') out.write(text)
  if (result.error) err.write(trailer)
  else if (trailer !== '') out.write(trailer)
}

/**
 * Indentation grows with the square of a value's depth: past this many characters the value is
 * printed without it (still exact JSON), rather than built whole or not at all.
 */
const MAX_INDENTED_CHARS = 64 * 1024 * 1024

/**
 * `value` as indented JSON, or as compact JSON with a note on `err` when indenting would be too
 * long: such a value may nest deeper than `JSON.stringify` can recurse, so it is written without.
 */
function valueText(value: PtcJsonValue, err: Sink): string {
  const indented = indentedJson(value, MAX_INDENTED_CHARS)
  if (indented.complete) return indented.text
  err.write(`the value is printed without indentation: indented, it would pass ${MAX_INDENTED_CHARS} characters\n`)
  return jsonText(value)
}

function renderEntry(entry: PtcOutput): string {
  if (entry.type === 'text') return entry.text
  const { attachment } = entry
  const label = attachment.name === undefined ? attachment.attachmentId : `${attachment.name} (${attachment.attachmentId})`
  return `[image ${label}: ${attachment.width}x${attachment.height} ${attachment.mediaType}, ${attachment.bytes} bytes]\n`
}
