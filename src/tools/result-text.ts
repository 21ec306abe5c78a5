/**
 * A run's result as the text a model reads next: what the program printed, then its value or
 * its failure, each cut to a budget with a marker that says what was cut.
 */
import type { PtcCallRecord, PtcRunResult } from '../seam/types.js'
import { indentedJson } from './indented-json.js'

/** How much of a result the model gets to read, in characters. */
export interface ResultTextBudget {
  /** Printed output beyond this keeps its first and last lines and drops the middle. */
  maxOutputChars: number
  /** The value (as indented JSON) or the failure message beyond this is cut at the end. */
  maxValueChars: number
}

/**
 * The text of a result: `Output:` (images as one bracketed line each), then `Result:` with the
 * value as indented JSON, `Error (kind): message`, or `Paused:` saying which call awaits a
 * decision (and what it asks, for a tool's `interrupt`) while the program waits. After a
 * failure, the tools whose calls completed are listed, so a retry can skip work already done;
 * after a success, the calls the program never awaited. Long output keeps its beginning and its end,
 * because both tend to matter (headers and totals); the value is cut at the end.
 */
export function resultText(result: PtcRunResult, budget: ResultTextBudget): string {
  const sections: string[] = []
  let output = ''
  for (const entry of result.output) {
    if (entry.type === 'text') output += entry.text
    else output += `[image ${entry.attachment.attachmentId}: ${entry.attachment.width}x${entry.attachment.height} ${entry.attachment.mediaType}]\n`
  }
  if (output !== '') sections.push(`Output:\n${keepEnds(output, budget.maxOutputChars)}`)
  if (result.paused) {
    const { tool, args, payload } = result.paused
    const max = budget.maxValueChars
    // The program chooses how deep and long these nest: each is written only as far as it is read.
    const call = `${tool}(${args === undefined ? '' : indentedJson(args, max, 0).text})`
    const awaits = payload === null ? 'approval by a person' : `a decision on ${indentedJson(payload, max, 0).text}`
    sections.push(
      `Paused: the call ${cutEnd(call, max, 'call')} awaits ${cutEnd(awaits, max, 'request')}. ` +
        'The program is waiting with its variables intact; you will read how it goes on once this is decided.',
    )
  } else if (result.error) sections.push(`Error (${result.error.kind}): ${cutEnd(result.error.message, budget.maxValueChars, 'message')}`)
  else if (result.value !== undefined) {
    const { text, complete } = indentedJson(result.value, budget.maxValueChars)
    sections.push(`Result:\n${complete ? text : `${text}\n[… result cut at ${budget.maxValueChars} characters; return less or summarise …]`}`)
  }
  const calls = result.calls ?? []
  const completed = tally(calls.filter((call) => call.outcome === 'ok'))
  if (result.error && completed !== '') {
    sections.push(`Calls that completed before the failure (their effects happened; do not repeat them): ${completed}`)
  }
  const unawaited = tally(calls.filter((call) => call.outcome === 'aborted'))
  if (!result.error && unawaited !== '') {
    sections.push(`Calls the program never awaited (it finished first; they may or may not have taken effect): ${unawaited}`)
  }
  return sections.length === 0 ? 'The program finished without output or result.' : sections.join('\n')
}

/** `a.b ×2, c.d`: each tool once, in order of first call, with its count. */
function tally(calls: readonly PtcCallRecord[]): string {
  const counts = new Map<string, number>()
  for (const call of calls) counts.set(call.tool, (counts.get(call.tool) ?? 0) + 1)
  return [...counts].map(([tool, count]) => (count === 1 ? tool : `${tool} ×${count}`)).join(', ')
}

/** `text` cut at `max`; the marker does not say of how many, as a value's text stops being written where it is cut. */
function cutEnd(text: string, max: number, what: string): string {
  if (text.length <= max) return text
  return `${text.slice(0, max)}\n[… ${what} cut at ${max} characters; return less or summarise …]`
}

/** Keeps whole lines from the start and the end of `text`, within `max` characters. */
function keepEnds(text: string, max: number): string {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text
  if (body.length <= max) return body
  const headEnd = body.lastIndexOf('\n', Math.ceil(max * 0.6))
  const tailStart = body.indexOf('\n', body.length - Math.floor(max * 0.4))
  const head = headEnd > 0 ? body.slice(0, headEnd) : body.slice(0, Math.ceil(max * 0.6))
  const tail = tailStart >= 0 ? body.slice(tailStart + 1) : body.slice(body.length - Math.floor(max * 0.4))
  const omitted = body.length - head.length - tail.length
  return `${head}\n[… ${omitted} characters of output omitted …]\n${tail}`
}
