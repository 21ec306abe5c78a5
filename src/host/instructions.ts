/**
 * The text a consumer puts in front of the model: how to write a program for this runtime.
 * Short and accurate; every sentence is something the model can act on.
 */
import type { PtcProgramFormat, PtcProgramLanguage } from '../seam/types.js'
import { pythonInstructionLines, pythonStateLine } from '../python/instructions.js'

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

/** What erasure accepts (src/transform/typescript.ts); everything else is plain JavaScript. */
const TYPESCRIPT =
  'TypeScript is accepted: type annotations, interfaces, type aliases, `as`, `!`, generics and `satisfies` are erased before the program runs, without type checking. Enums, namespaces and constructor parameter properties are not supported.'

/** What lowering forgives (src/transform/habits.ts), so the model need not fear it. */
const HABITS = 'A program that is one function expression (`async () => { ... }`) is called and its value is the result; one Markdown fence around the program is ignored.'

export interface InstructionFacts {
  format: PtcProgramFormat
  language?: PtcProgramLanguage
  retainsState: boolean
  timeoutMs: number
  maxOutputBytes: number
  /** Tool calls one program may make (`maxCalls`). */
  maxCalls: number
  /** The kernel-enforced memory budget of an environment; absent on the thread host. */
  maxMemoryMb?: number
  sandbox?: string
}

export function executionInstructions(facts: InstructionFacts): string {
  const python = facts.language === 'python'
  const lines = [
    ...(python ? pythonInstructionLines(facts.format) : javascriptLines(facts)),
    `Limits: ${duration(facts.timeoutMs)} per call by default; ${size(facts.maxOutputBytes)} of printed output and result together; ${facts.maxCalls} tool calls per program.`,
    ...(facts.maxMemoryMb === undefined ? [] : [`Memory: ${facts.maxMemoryMb} MiB in all (heap, buffers, WebAssembly); a program that allocates more is stopped.`]),
    facts.retainsState ? (python ? pythonStateLine(facts.format) : STATE[facts.format]) : 'Each call starts in a fresh environment: nothing persists between calls.',
  ]
  if (facts.sandbox) lines.push(facts.sandbox)
  return lines.join('\n')
}

function javascriptLines(facts: InstructionFacts): string[] {
  return [
    FORMATS[facts.format],
    ...(facts.language === 'typescript' ? [TYPESCRIPT] : []),
    HABITS,
    'Tools are global objects of async functions: `const r = await tools.search({ q: "x" })`. Arguments and results are plain JSON. Call independent tools concurrently with Promise.all. A failed tool call throws; catch it to recover.',
    'Tool namespaces are read-only and have no prototype: keep your own helpers in local functions or variables (not `tools.step = ...`), and test for a tool with `Object.hasOwn(tools, "name")` (not `tools.hasOwnProperty`).',
    'The result must be plain JSON (objects, arrays, strings, finite numbers, booleans, null); return nothing when you have only printed.',
    'console.log and process.stdout.write print text; inspect(image) shows an Image a tool returned (its path, width, height and mediaType are readable).',
    'Node built-ins load with `await import("node:fs")`. Relative paths and subprocesses use the working directory; process.env is empty.',
  ]
}

/** A time budget as a person writes it: `2 min`, `30 s`, `1.5 s`, `500 ms`; never rounded. */
export function duration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`
  if (ms >= 1000 && ms % 100 === 0) return `${ms / 1000} s`
  return `${ms} ms`
}

// Largest first, binary before decimal: 64 MiB is a configured 67108864, 1 MB a configured 1000000.
const UNITS: Array<[string, number]> = [
  ['GiB', 2 ** 30], ['GB', 1e9], ['MiB', 2 ** 20], ['MB', 1e6], ['KiB', 2 ** 10], ['kB', 1e3],
]

/** A byte count as a person writes it (`64 MiB`, `1 MB`, `1.5 KiB`), exact or else in bytes. */
export function size(bytes: number): string {
  for (const [unit, factor] of UNITS) {
    if (bytes >= factor && (bytes * 10) % factor === 0) return `${bytes / factor} ${unit}`
  }
  return `${bytes} bytes`
}
