/**
 * What `ptc-run` does with a held call (a tool's `needsApproval` or `interrupt`): the REPL at a
 * terminal asks the person there; anywhere else nobody can answer, so the call is refused at
 * once with a reason the program reads, rather than left waiting for `holdTimeoutMs`.
 */
import type { PtcRuntime } from '../seam/api.js'
import type { PtcHoldDecision, PtcPause, PtcRunResult } from '../seam/types.js'
import { indentedJson } from '../tools/indented-json.js'
import { printResult, type Sink } from './print.js'

/** Asks a person one question and resolves with the line they typed. */
export type Ask = (question: string) => Promise<string>

/**
 * How much of a held call, and of what it asks, a terminal shows. The program chose how long
 * and how deep they are, so each is written only that far.
 */
const MAX_CALL_CHARS = 500
const MAX_REQUEST_CHARS = 10_000

/** `tools.send({"to":"ana"})`, cut for a terminal line. */
function callText({ tool, args }: PtcPause): string {
  const text = `${tool}(${args === undefined ? '' : indentedJson(args, MAX_CALL_CHARS, 0).text})`
  return text.length > MAX_CALL_CHARS ? `${text.slice(0, MAX_CALL_CHARS)}…` : text
}

/** What a tool's `hold` asks, as compact JSON, marked when cut. */
function requestText({ payload }: PtcPause): string {
  const { text, complete } = indentedJson(payload, MAX_REQUEST_CHARS, 0)
  return complete ? text : `${text}…`
}

async function decide(paused: PtcPause, ask: Ask | undefined, err: Sink): Promise<PtcHoldDecision> {
  if (!ask) {
    err.write(`ptc-run: refused ${callText(paused)}: it needs a decision and nobody can answer here (use --repl at a terminal)\n`)
    return { approve: false, reason: 'nobody could approve this call (ptc-run without a terminal)' }
  }
  if (paused.payload === null) {
    const answer = await ask(`${callText(paused)} awaits approval. Approve? [y/N] `)
    return /^y(es)?$/i.test(answer.trim()) ? { approve: true } : { approve: false, reason: 'refused at the terminal' }
  }
  const answer = await ask(`${callText(paused)} asks ${requestText(paused)}\nAnswer (empty refuses): `)
  return answer === '' ? { approve: false, reason: 'refused at the terminal' } : { approve: true, value: answer }
}

/**
 * Answers every pause of `result` (printing the output each brought) and resolves with the
 * run's final result, which the caller prints.
 */
export async function answerHolds(runtime: PtcRuntime, result: PtcRunResult, io: { out: Sink; err: Sink; ask?: Ask; signal?: AbortSignal }): Promise<PtcRunResult> {
  while (result.paused) {
    printResult(result, io.out, io.err)
    const decision = await decide(result.paused, io.ask, io.err)
    result = await runtime.resume(result.paused.id, decision, io.signal ? { signal: io.signal } : {})
  }
  return result
}
