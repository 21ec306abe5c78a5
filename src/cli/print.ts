/**
 * How `ptc-run` shows a result: the program's output exactly as written, image entries as one
 * bracketed line each, then the completion value as JSON or the failure on standard error.
 */
import type { PtcOutput, PtcRunResult } from '../seam/types.js'

export interface Sink {
  write(text: string): unknown
}

/** Writes `result` for a person to read. */
export function printResult(result: PtcRunResult, out: Sink, err: Sink): void {
  let text = ''
  for (const entry of result.output) text += renderEntry(entry)
  const trailer = result.error ? `error (${result.error.kind}): ${result.error.message}\n` : 'value' in result ? `${JSON.stringify(result.value, null, 2)}\n` : ''
  // A program that printed without a final newline must not run into what follows.
  if (trailer !== '' && text !== '' && !text.endsWith('\n')) text += '\n'
  if (text !== '') out.write(text)
  if (result.error) err.write(trailer)
  else if (trailer !== '') out.write(trailer)
}

function renderEntry(entry: PtcOutput): string {
  if (entry.type === 'text') return entry.text
  const { attachment } = entry
  const label = attachment.name === undefined ? attachment.attachmentId : `${attachment.name} (${attachment.attachmentId})`
  return `[image ${label}: ${attachment.width}x${attachment.height} ${attachment.mediaType}, ${attachment.bytes} bytes]\n`
}
