/**
 * `ptc-run --repl`: reads programs from the terminal (or a pipe) and runs each in one retained
 * environment, so later programs see what earlier ones declared. A program may span lines:
 * reading continues while the input so far ends in the middle of a statement, a bracket, a
 * template literal or a comment, exactly the inputs a parser fails on at their very end.
 */
import { createInterface } from 'node:readline'
import type { PtcRuntime } from '../seam/api.js'
import type { PtcBindingNamespace, PtcProgramFormat } from '../seam/types.js'
import { parseProgram } from '../transform/parse.js'
import { ProgramSyntaxError } from '../transform/syntax-error.js'
import { type Ask, answerHolds } from './holds.js'
import { printResult, type Sink } from './print.js'

export interface ReplIo {
  input: NodeJS.ReadableStream
  out: Sink & NodeJS.WritableStream
  err: Sink
  /** Prompts and the banner are shown only to a person at a terminal. */
  interactive: boolean
}

/** Reads and runs programs until end of input or `.exit`; resolves with the exit code (0). */
export async function runRepl(runtime: PtcRuntime, bindings: PtcBindingNamespace[], io: ReplIo): Promise<number> {
  const owner = {}
  const format = runtime.programFormat
  const lines = createInterface({ input: io.input, ...(io.interactive ? { output: io.out } : {}), terminal: io.interactive })
  let pending = ''
  let running: AbortController | undefined
  // Input may end (Ctrl-D) while a program runs; the lines read before still run, but there is
  // no one left to prompt (and since Node 24 prompting a closed interface throws).
  let inputEnded = false
  lines.once('close', () => (inputEnded = true))
  const prompt = () => {
    if (!io.interactive || inputEnded) return
    lines.setPrompt(pending === '' ? '> ' : '... ')
    lines.prompt()
  }
  // Ctrl-C stops the program in progress; otherwise it drops a half-typed program, or leaves.
  // At a terminal readline reports it; with piped input it arrives as a signal.
  const interrupt = () => {
    if (running) running.abort(new Error('interrupted (Ctrl-C)'))
    else if (pending !== '') {
      pending = ''
      io.out.write('\n')
      prompt()
    } else lines.close()
  }
  lines.on('SIGINT', interrupt)
  if (!io.interactive) process.on('SIGINT', interrupt)
  const run = async (program: string) => {
    running = new AbortController()
    try {
      const first = await runtime.run(runtime.resolve({ program, bindings, stateOwner: owner, signal: running.signal }))
      // A held call is asked at the terminal, in place of the next line the loop would read.
      const ask: Ask | undefined = io.interactive && !inputEnded ? (question) => new Promise((resolve) => lines.question(question, resolve)) : undefined
      printResult(await answerHolds(runtime, first, { out: io.out, err: io.err, signal: running.signal, ...(ask ? { ask } : {}) }), io.out, io.err)
    } finally {
      running = undefined
    }
  }

  if (io.interactive) {
    const tools = bindings.length === 0 ? 'no tools' : `tools: ${bindings.map((b) => b.global).join(', ')}`
    io.out.write(`ptc-run REPL (${format}, ${tools}). Programs may span lines; .exit or Ctrl-D leaves.\n`)
  }
  prompt()
  for await (const line of lines) {
    if (pending === '' && line.trim() === '.exit') break
    if (pending === '' && line.trim() === '') {
      prompt()
      continue
    }
    pending = pending === '' ? line : `${pending}\n${line}`
    if (!isIncomplete(pending, format)) {
      const program = pending
      pending = ''
      await run(program)
    }
    prompt()
  }
  lines.close()
  process.off('SIGINT', interrupt)
  // At end of input an unfinished program still runs, so its syntax error is reported.
  if (pending.trim() !== '') await run(pending)
  await runtime.release(owner)
  return 0
}

/**
 * Whether `source` stops in the middle of something: the parser fails at the very end of the
 * input, or inside a template literal or comment that may go on over further lines. Any other
 * syntax error is complete input, left for the runtime to report with its position. The input
 * is parsed exactly as the runtime parses programs (so top-level `await`, and `using`, which a
 * plain script may not declare at its top level, read as they will run).
 */
function isIncomplete(source: string, format: PtcProgramFormat): boolean {
  try {
    parseProgram(source, format === 'function-body')
    return false
  } catch (error) {
    if (!(error instanceof ProgramSyntaxError)) return false
    return /^SyntaxError: (Unexpected end of input|Unterminated (template|comment)) /.test(error.message)
  }
}
