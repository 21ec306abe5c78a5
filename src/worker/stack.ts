/**
 * Stack traces that speak the program's language: every frame is mapped back to the line and
 * column the model wrote, and wrapper or runtime frames are dropped. Installed as
 * `Error.prepareStackTrace`, so `error.stack`, `console.trace` and our exception messages all
 * agree; the first line carries a hint where the model slipped on a name (`hints.ts`). A program may replace it; our own rendering does not depend on it.
 */
import { inspect, types } from 'node:util'
import { PositionMap } from '../transform/position-map.js'
import type { ProgramCode } from '../protocol/messages.js'
import { slipHint } from './hints.js'
import { ErrorOf, StringOf, WeakMapOf, weakMapGet, weakMapSet } from './intrinsics.js'

interface Frame {
  name: string | null
  label: string
  line: number
  column: number
}

const programs: Record<string, { map: PositionMap; label: string; run: number }> = Object.create(null)
const isNativeError = types.isNativeError
/** Runs of this environment are numbered from 1, as the model saw them. */
let runOrdinal = 0
let lastHostRun = -1
const framesOf = new WeakMapOf<object, Frame[]>()

/** Forgets every registered program and restarts the run numbering (after the rehearsal). */
export function forgetPrograms(): void {
  for (const name in programs) delete programs[name]
  runOrdinal = 0
  lastHostRun = -1
}

/**
 * Registers a program about to be compiled and returns the file name to compile it under.
 * Lowered code names itself after its content (a `sourceURL`), which is what stack frames
 * carry, so frames of functions from earlier runs of a retained environment still find their
 * own run's map; those are labelled by run.
 */
export function registerProgram(program: ProgramCode, label: 'program' | 'initializer', hostRun: number): string {
  if (hostRun !== lastHostRun) {
    lastHostRun = hostRun
    runOrdinal++
  }
  const run = runOrdinal
  for (const name in programs) {
    const entry = programs[name]!
    if (entry.label === 'program' && entry.run !== run) entry.label = `program of run ${entry.run}`
  }
  const map = new PositionMap(program.positions)
  programs[map.file] = { map, label, run }
  return map.file
}

// Both loops are indexed: a program may have replaced the array iterator, and errors must
// still render (the call sites array belongs to the program's realm). The CallSite methods are
// looked up on each call: a program that replaces them can only mislabel frames of its own errors.
/* eslint-disable hostile-realm/captured-builtins -- a patched CallSite mislabels only its own frames */
function programFrames(callSites: NodeJS.CallSite[]): Frame[] {
  const frames: Frame[] = []
  for (let index = 0; index < callSites.length; index++) {
    const site = callSites[index]!
    const entry = programs[site.getFileName() ?? '']
    const line = site.getLineNumber()
    const column = site.getColumnNumber()
    if (entry === undefined || line === null || column === null) continue
    const original = entry.map.original(line, column)
    if (original === undefined) continue
    frames[frames.length] = { name: site.getFunctionName(), label: entry.label, line: original.line, column: original.column }
  }
  return frames
}
/* eslint-enable hostile-realm/captured-builtins */

function renderFrames(frames: readonly Frame[]): string {
  let text = ''
  for (let index = 0; index < frames.length; index++) {
    const { name, label, line, column } = frames[index]!
    text += name ? `\n    at ${name} (${label}:${line}:${column})` : `\n    at ${label}:${line}:${column}`
  }
  return text
}

function safeString(value: unknown, fallback: string): string {
  try {
    return typeof value === 'string' ? value : StringOf(value)
  } catch {
    return fallback
  }
}

function header(error: Error): string {
  let name: unknown
  let message: unknown
  try {
    name = error.name
    message = error.message
  } catch {
    return 'Error: <unrenderable error>'
  }
  const n = name === undefined ? 'Error' : safeString(name, 'Error')
  const m = message === undefined ? '' : safeString(message, '<unrenderable message>')
  return m === '' ? n : n === '' ? m : `${n}: ${m}${slipHint(n, m)}`
}

/** Installs the program-facing stack formatter. Called once at worker start. */
export function installStackFormatter(): void {
  ErrorOf.stackTraceLimit = 50
  ErrorOf.prepareStackTrace = (error: Error, callSites: NodeJS.CallSite[]) => {
    const frames = programFrames(callSites)
    if (typeof error === 'object' && error !== null) weakMapSet(framesOf, error, frames)
    return header(error) + renderFrames(frames)
  }
}

/**
 * Renders whatever a program threw as a short message for the model: `Name: message` and
 * the program frames of the throw site. Never throws, whatever getters the value has.
 */
export function describeThrown(thrown: unknown): string {
  if (isNativeError(thrown)) {
    try {
      void thrown.stack // materializes the frames through prepareStackTrace
    } catch {
      // a throwing `stack` getter: fall back to the header alone
    }
    const frames = weakMapGet(framesOf, thrown)
    return header(thrown) + renderFrames(frames ?? [])
  }
  try {
    return `Uncaught ${inspect(thrown, { depth: 2, breakLength: Infinity })}`
  } catch {
    return 'Uncaught <unrenderable value>'
  }
}
