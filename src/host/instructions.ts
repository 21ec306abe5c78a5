/**
 * The text a consumer puts in front of the model: how to write a program for this runtime.
 * Short and accurate; every sentence is something the model can act on.
 */
import type { PtcProgramFormat } from '../seam/types.js'

const FORMATS: Record<PtcProgramFormat, string> = {
  'function-body':
    'Write the body of an async JavaScript function (strict mode): use top-level await, and `return` the result.',
  script:
    'Write a JavaScript script: top-level declarations and await are allowed; the value of the last expression statement is the result. Top-level `return` is not allowed.',
  repl:
    'Write JavaScript like a console session: top-level declarations and await are allowed; the value of the last expression statement is the result. Top-level `return` is not allowed.',
  'scoped-repl':
    'Write JavaScript like a console session: top-level declarations and await are allowed; the value of the last expression statement is the result. Top-level `return` is not allowed.',
}

const STATE: Record<PtcProgramFormat, string> = {
  'function-body': 'Globals you set on globalThis persist between calls of this conversation.',
  script: 'Top-level declarations persist between calls of this conversation.',
  repl: 'Top-level declarations persist between calls and a later call may declare a name again; functions from earlier calls see the newest value of a name.',
  'scoped-repl':
    'Each call starts with copies of the top-level variables earlier calls left; redeclaring a name does not change what earlier functions captured.',
}

export interface InstructionFacts {
  format: PtcProgramFormat
  retainsState: boolean
  timeoutMs: number
  maxOutputBytes: number
  /** The kernel-enforced memory budget of an environment; absent on the thread host. */
  maxMemoryMb?: number
  sandbox?: string
}

export function executionInstructions(facts: InstructionFacts): string {
  const lines = [
    FORMATS[facts.format],
    'Tools are global objects of async functions: `const r = await tools.search({ q: "x" })`. Arguments and results are plain JSON. Call independent tools concurrently with Promise.all. A failed tool call throws; catch it to recover.',
    'The result must be plain JSON (objects, arrays, strings, finite numbers, booleans, null); return nothing when you have only printed.',
    'console.log and process.stdout.write print text; inspect(image) shows an Image a tool returned (its path, width, height and mediaType are readable).',
    'Node built-ins load with `await import("node:fs")`. Relative paths and subprocesses use the working directory; process.env is empty.',
    `Limits: ${Math.round(facts.timeoutMs / 1000)} s per call by default; ${facts.maxOutputBytes} bytes of printed output and result together.`,
    ...(facts.maxMemoryMb === undefined ? [] : [`Memory: ${facts.maxMemoryMb} MiB in all (heap, buffers, WebAssembly); a program that allocates more is stopped.`]),
    facts.retainsState ? STATE[facts.format] : 'Each call starts in a fresh environment: nothing persists between calls.',
  ]
  if (facts.sandbox) lines.push(facts.sandbox)
  return lines.join('\n')
}
