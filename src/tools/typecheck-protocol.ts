/**
 * What the host and the type check's worker say to each other, and how the compiler's
 * diagnostics become the text the model reads. Shared by both sides, free of TypeScript itself.
 */
import type { PtcProgramFormat } from '../seam/types.js'
import { unfence } from '../transform/habits.js'
import type { FoundDiagnostic } from './typecheck-engines.js'
import type { TypescriptLocation } from './typescript-location.js'

/** What a worker is started with. */
export interface CheckerSetup {
  declarations: string
  format: PtcProgramFormat
  /** The TypeScript to load. */
  typescript: TypescriptLocation
}

/** One program to check. */
export interface CheckRequest {
  id: number
  program: string
}

/** What a worker answers. */
export type WorkerMessage =
  | { type: 'ready'; version: string; pid?: number }
  | { type: 'unavailable'; message: string }
  | { type: 'checked'; id: number; mistakes: string | undefined }

/**
 * What the check leaves to run time: names and modules the declarations do not describe (the
 * program's Node globals and built-in modules, and in the REPL formats what earlier runs
 * declared). The check is about the tools and the language, not about the environment.
 */
const LEFT_TO_RUN_TIME = new Set([2304, 2552, 2580, 2582, 2583, 2584, 2591, 2307, 2792])

/** Diagnostics quoted in one failure, so a program with a systematic mistake stays readable. */
const MAX_DIAGNOSTICS = 10
/**
 * Characters of one quoted message, and of all of them: a message quotes the program's names
 * and types, so twelve uses of a 1 MB name made a 1 MB failure, most of it past what the model
 * reads (10 000 characters by default) and all of it in the host's memory and result.
 */
const MAX_MESSAGE_CHARS = 2_000
const MAX_QUOTED_CHARS = 8_000

/**
 * The program as the checked file: the body of an async function, or a module with top-level
 * await; either wrapper takes exactly the first line, so the program's line L is the file's
 * line L + 1. A fence's lines become blank, as when the program runs.
 */
export function checkedText(program: string, format: PtcProgramFormat): string {
  const open = format === 'function-body' ? 'export {}; async function program() {\n' : 'export {};\n'
  const close = format === 'function-body' ? '\n}' : '\n'
  return open + unfence(program) + close
}

/** The compiler's messages at the program's lines and columns, or `undefined` when it checks. */
export function describeDiagnostics(found: readonly FoundDiagnostic[], text: string, format: PtcProgramFormat): string | undefined {
  const repl = format === 'repl' || format === 'scoped-repl'
  const diagnostics = found.filter((diagnostic) => !LEFT_TO_RUN_TIME.has(diagnostic.code) && !(repl && diagnostic.code === 2448))
  if (diagnostics.length === 0) return undefined
  const firstLineEnd = text.indexOf('\n') + 1
  const lines: string[] = []
  let quoted = 0
  for (const diagnostic of diagnostics.slice(0, MAX_DIAGNOSTICS)) {
    const start = Math.min(Math.max(diagnostic.start, firstLineEnd), text.length)
    const lineStart = text.lastIndexOf('\n', start - 1) + 1
    let line = 0
    for (let index = text.indexOf('\n'); index !== -1 && index < start; index = text.indexOf('\n', index + 1)) line++
    const next = `TS${diagnostic.code}: ${cut(diagnostic.message)} (line ${line}, column ${start - lineStart + 1})`
    // The first is always quoted, so a failure says at least one thing.
    if (lines.length > 0 && quoted + next.length > MAX_QUOTED_CHARS) break
    lines.push(next)
    quoted += next.length
  }
  if (diagnostics.length > lines.length) lines.push(`…and ${diagnostics.length - lines.length} more`)
  return `The program does not type-check against the declared tools; nothing ran.\n${lines.join('\n')}`
}

/** `message` within MAX_MESSAGE_CHARS, saying how much was cut. */
function cut(message: string): string {
  return message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS)}…[${message.length - MAX_MESSAGE_CHARS} characters cut]`
}

/**
 * The declarations as the checker reads them: a type the schemas left open (`unknown`: a tool
 * without an `outputSchema`, a property without a schema) is `any`, so a program may use such
 * a result as it sees fit, while every declared argument and result type is still checked.
 * Only the type keyword changes: a quoted `'unknown'` literal or a property named `unknown` stays.
 */
export function lenientDeclarations(declarations: string): string {
  return declarations.replace(/(?<![\w$'"`.])unknown(?![\w$'"`]|\??:)/g, 'any')
}
