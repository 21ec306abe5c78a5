/**
 * Python programs in the worker: Pyodide (CPython compiled to WebAssembly) loaded once per
 * worker from the directory the host resolved, then one program at a time through the `_ptc`
 * module (python-prelude.ts). Pyodide is no sandbox (Python reaches all of Node through its FFI),
 * so it runs only here, inside the environment's worker, under the tier's confinement; a
 * deadline or abort ends it as it ends JavaScript, by ending the worker.
 *
 * Values cross between the languages only as JSON text, parsed and written with the built-ins
 * captured at load, so a Python program that replaces `js.JSON` changes nothing here.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import type { NamespaceShape, ProgramCode, PythonProgram, PythonSnapshot } from '../protocol/messages.js'
import { ErrorOf, PromiseOf, Uint8ArrayOf, apply, create, realmGlobal, uncurryThis } from './intrinsics.js'
import { type Image, createInspect, isGenuine } from './images.js'
import { pathPastDepth } from '../json/depth.js'
import { jsonText } from '../json/text.js'
import { PAST_PYTHON_DEPTH, PYTHON_MAX_DEPTH, PYTHON_PRELUDE } from './python-prelude.js'
import { PYTHON_PRELUDE_IO } from './python-prelude-io.js'
import { type ProgramFetch, type PythonFetch, messageOf, pythonFetch } from './python-fetch.js'
import { describeThrown } from './stack.js'

// Captured before any program runs: the snapshot's check must not be one a program replaced.
const readFile = fs.readFileSync
const close = fs.closeSync
const fstat = fs.fstatSync
const { S_IFMT, S_IFREG } = fs.constants
type Subtle = typeof globalThis.crypto.subtle
const subtle = globalThis.crypto.subtle
const webCrypto = globalThis.crypto
const getRandomValues = uncurryThis(webCrypto.getRandomValues) as (self: typeof webCrypto, array: Uint8Array) => Uint8Array
const digest = uncurryThis(subtle.digest) as (self: Subtle, algorithm: string, data: Uint8Array) => Promise<ArrayBuffer>
const numberToString = uncurryThis(Number.prototype.toString) as (self: number, radix: number) => string
const RangeErrorOf = RangeError
const jsonParse = JSON.parse
const jsonStringify = JSON.stringify
const TextDecoderOf = TextDecoder
const decodeText = uncurryThis(TextDecoder.prototype.decode)
const stringSlice = uncurryThis(String.prototype.slice)
const promiseThen = uncurryThis(Promise.prototype.then) as (promise: Promise<unknown>, fulfilled: (value: unknown) => void, rejected: (error: unknown) => void) => unknown

/** What the worker keeps of its interpreter: the prelude's entry points, as Pyodide proxies. */
interface Interpreter {
  execute(source: string, filename: string, format: string): Promise<string>
  install(globals: unknown, shapes: string, call: ToolCall, show: Show, imageKey: string, fetch: PythonFetch | null): void
  runGlobals(format: string): unknown
}

type ToolCall = (global: string, member: string, text: string | undefined, positional: boolean) => Promise<string>
type Write = (text: string) => void
/** Shows the run's image with this handle (`inspect(image)` in Python); an unknown handle shows nothing. */
type Show = (handle: number) => void

/** Where a Python run's output goes: its text, and the images `inspect` shows. */
interface PythonOutput {
  text(text: string): void
  image(id: string, bytes: number): void
}

/**
 * The key of the object a genuine image crosses to Python as (the prelude's `Image`): its
 * handle in the run's table of images, with the fields a program reads. Random per worker, so a
 * tool's result that happens to hold such a key stays a dict: drawn at first use, not as the
 * module loads, which a startup snapshot would share among every helper restored from it.
 */
let imageKey: string | undefined
const imageKeyOf = () => (imageKey ??= `__ptc_image_${randomHex()}__`)
/** The images the tools of the running Python program resolved, by handle. */
let runImages: Image[] = []

interface Pyodide {
  version: string
  runPython(code: string): unknown
  globals: { set(name: string, value: unknown): void; delete(name: string): void }
  pyimport(name: string): Record<string, (...args: unknown[]) => unknown>
  setStdout(options: { write(buffer: Uint8Array): number }): void
  setStderr(options: { write(buffer: Uint8Array): number }): void
  setStdin(options: { stdin(): undefined }): void
  /** Pyodide's internals: `on_fatal` is called once, as Pyodide fails fatally. */
  _api: { on_fatal?: (error: unknown) => void }
}

let loading: Promise<Interpreter> | undefined
/**
 * Why Pyodide failed fatally, once it has (its C code overflowed the stack, say): its
 * interpreter then throws or hangs on every use, so no Python runs in this worker again.
 */
let fatal: string | undefined
/** Ends the running Python run as unable to go on; between runs, nothing. */
let endUnusable: ((text: string) => void) | undefined
/** Where the running program's output goes; between runs it is dropped. */
let write: Write | undefined
const decoder = new TextDecoderOf('utf-8')

function writer(buffer: Uint8Array): number {
  const text = decodeText(decoder, buffer, { stream: true })
  if (text !== '' && write) write(text)
  return buffer.length
}

/** The snapshot this environment was handed as it started, until it is read or let go. */
let handed: PythonSnapshot | undefined
/** A snapshot read from a descriptor of the environment's own, and its bytes, until the interpreter loads. */
let taken: { snapshot: PythonSnapshot; bytes: Uint8Array | undefined } | undefined

/** Keeps the snapshot the environment was handed (see PythonSnapshot), for the interpreter's load. */
export function handPythonSnapshot(snapshot: PythonSnapshot | undefined): void {
  handed = snapshot
}

/**
 * Settles the handed snapshot as a run arrives, before any of its code (initializer or program)
 * runs: a descriptor of the environment's own is read now if the run is Python, and closed
 * either way, so no code of the run ever holds it. A worker thread of the host's keeps the
 * host's descriptor to read at the load.
 */
export function settlePythonSnapshot(python: boolean): void {
  if (!handed?.own) return
  const snapshot = handed
  handed = undefined
  if (python) taken = { snapshot, bytes: readSnapshot(snapshot) }
  try {
    close(snapshot.descriptor)
  } catch {
    // closed already
  }
}

/**
 * The snapshot's bytes, read through a description of its own (the descriptor's offset is shared
 * with other helpers); undefined unless the descriptor leads to a regular file of the snapshot's
 * size (a host descriptor closed and reused by then leads to anything).
 */
function readSnapshot({ descriptor, bytes }: PythonSnapshot): Uint8Array | undefined {
  try {
    const { mode, size } = fstat(descriptor)
    return (mode & S_IFMT) === S_IFREG && size === bytes ? readFile(`/proc/self/fd/${descriptor}`) : undefined
  } catch {
    return undefined
  }
}

/** The worker's interpreter, loaded on first use (the pool loads it before `ready`, see environment.ts). */
export function loadInterpreter(python: PythonProgram): Promise<Interpreter> {
  loading ??= load(python)
  return loading
}

async function load({ directory, version }: PythonProgram): Promise<Interpreter> {
  const requireFrom = createRequire(`${directory}/package.json`)
  const { loadPyodide } = requireFrom('./pyodide.js') as { loadPyodide(options: object): Promise<Pyodide> }
  settlePythonSnapshot(true) // a rehearsal loads before any run has settled it
  const { snapshot, bytes } = taken ?? (handed ? { snapshot: handed, bytes: readSnapshot(handed) } : {})
  handed = taken = undefined
  const restored = snapshot && bytes && snapshot.version === version && (await digestOf(bytes)) === snapshot.sha256 ? bytes : undefined
  const options = { indexURL: `${directory}/`, env: { HOME: '/home/pyodide' }, packages: [], checkAPIVersion: true }
  const pyodide = await loadPyodide(restored ? { ...options, _loadSnapshot: restored } : options)
  if (pyodide.version !== version) throw new ErrorOf(`Pyodide ${pyodide.version} loaded from ${directory}, but the host resolved ${version}`)
  pyodide.setStdout({ write: writer })
  pyodide.setStderr({ write: writer })
  pyodide.setStdin({ stdin: () => undefined })
  pyodide._api.on_fatal = (error) => {
    fatal = fatalText(error)
    endUnusable?.(fatal)
  }
  pyodide.globals.set('__ptc_prelude__', PYTHON_PRELUDE + PYTHON_PRELUDE_IO)
  pyodide.runPython("import sys, types\n_m = types.ModuleType('_ptc')\nexec(__ptc_prelude__, _m.__dict__)\nsys.modules['_ptc'] = _m\ndel _m, __ptc_prelude__")
  const module = pyodide.pyimport('_ptc')
  return {
    execute: module.execute as Interpreter['execute'],
    install: module.install as Interpreter['install'],
    runGlobals: module.run_globals as Interpreter['runGlobals'],
  }
}

function fatalText(error: unknown): string {
  const cause = describeThrown(error)
  // A stack overflow in C code is what nesting tens of thousands of levels deep causes.
  const hint = error instanceof RangeErrorOf ? `; a value nested past ${PYTHON_MAX_DEPTH} levels cannot cross to or from Python, and one a few thousand levels deeper overflows Pyodide's stack even as Python frees it` : ''
  return `Python failed fatally in this environment (${cause}) and cannot run in it again${hint}; the next run starts in a fresh environment`
}

/** The SHA-256 of `bytes`, in hex, computed with what was captured at load. */
async function digestOf(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8ArrayOf(await digest(subtle, 'SHA-256', bytes))
  let hex = ''
  for (let index = 0; index < hash.length; index++) hex += (hash[index]! < 16 ? '0' : '') + numberToString(hash[index]!, 16)
  return hex
}

/**
 * Runs a Python program (or initializer) and resolves to its completion value (parsed from the
 * JSON text Python wrote; undefined for no value), or rejects with an error whose message is the
 * failure text the model reads. If Pyodide fails fatally, before or during the run, `unusable`
 * ends the run with why, and what this returns is never read.
 */
export async function runPython(program: ProgramCode & { python: PythonProgram }, label: 'program' | 'initializer', namespaces: readonly NamespaceShape[], output: PythonOutput, unusable: (text: string) => void): Promise<unknown> {
  const interpreter = await loadInterpreter(program.python)
  if (fatal !== undefined) return unusable(fatal)
  const format = program.python.format
  const globals = interpreter.runGlobals(format)
  const images: Image[] = []
  runImages = images
  const inspect = createInspect(output)
  const show: Show = (handle) => {
    // Python may pass anything here (a program can call the prelude's internals): only an index of this run's images shows.
    if (typeof handle !== 'number') return
    const image = images[handle]
    if (image !== undefined) inspect(image)
  }
  interpreter.install(globals, jsonStringify(pythonNamespaces(namespaces)), toolCaller(namespaces), show, imageKeyOf(), brokeredFetch(namespaces))
  write = (text) => output.text(text)
  endUnusable = unusable
  let answer: string
  try {
    answer = await interpreter.execute(program.code, label, format)
  } finally {
    const rest = decodeText(decoder)
    if (rest !== '') output.text(rest)
    write = undefined
    endUnusable = undefined
    runImages = []
  }
  if (answer[0] === 'u') return undefined
  if (answer[0] === 'v') return jsonParse(stringSlice(answer, 1)) as unknown
  const failure = new ErrorOf(stringSlice(answer, 1))
  failure.name = '' // the text is complete: the stack formatter prints it as it is
  throw failure
}

/**
 * Python's `fetch` when the run has brokered egress: the binding bridge installed the run's
 * `fetch` before the program runs, and it is captured now, so a program that replaces it later
 * (through the FFI) changes nothing here. Without egress, Python has no `fetch`.
 */
function brokeredFetch(namespaces: readonly NamespaceShape[]): PythonFetch | null {
  for (let index = 0; index < namespaces.length; index++) {
    if (namespaces[index]!.egress !== true) continue
    const fetch = (realmGlobal as Record<string, unknown>).fetch
    return typeof fetch === 'function' ? pythonFetch(fetch as ProgramFetch) : null
  }
  return null
}

/** The namespaces a Python program sees as objects: the egress broker is no namespace of its own. */
function pythonNamespaces(namespaces: readonly NamespaceShape[]): NamespaceShape[] {
  const shapes: NamespaceShape[] = []
  for (let index = 0; index < namespaces.length; index++) {
    const shape = namespaces[index]!
    if (shape.egress !== true) shapes[shapes.length] = shape
  }
  return shapes
}

/**
 * How Python calls a tool: through the member the binding bridge installed for this run
 * (captured now, before the program runs), with arguments and result as JSON text. The answer
 * is tagged: `v` and the result's JSON, `u` for no value, `e` and the error message, `d` and
 * why the result nests too deep for Python (the prelude raises it as a ValueError).
 */
function toolCaller(namespaces: readonly NamespaceShape[]): ToolCall {
  const members = create(null) as Record<string, (...args: unknown[]) => Promise<unknown>>
  for (let index = 0; index < namespaces.length; index++) {
    const shape = namespaces[index]!
    const namespace = (realmGlobal as Record<string, unknown>)[shape.global] as Record<string, unknown> | undefined
    if (namespace === undefined || shape.egress === true) continue
    for (let position = 0; position < shape.members.length; position++) {
      const member = shape.members[position]!
      members[`${shape.global}\u0000${member}`] = namespace[member] as (...args: unknown[]) => Promise<unknown>
    }
  }
  return (global, member, text, positional) =>
    new PromiseOf<string>((resolve) => {
      const invoke = members[`${global}\u0000${member}`]
      if (invoke === undefined) return resolve(`e${global}.${member} is not a tool of this run`)
      const args = text === undefined || text === null ? undefined : (jsonParse(text) as unknown)
      const list = positional && args !== undefined ? (args as unknown[]) : undefined
      let pending: Promise<unknown>
      try {
        pending = list ? apply(invoke, undefined, list) as Promise<unknown> : args === undefined ? invoke() : invoke(args)
      } catch (error) {
        return resolve(`e${messageOf(error)}`)
      }
      promiseThen(
        pending,
        (value) => {
          if (value === undefined) return resolve('u')
          // Written without recursion: JSON.stringify with a replacer overflows the worker's stack under 10 000 levels.
          const deep = pathPastDepth(value, PYTHON_MAX_DEPTH)
          resolve(deep === null ? `v${jsonText(value, imagesForPython)}` : `d${global}.${member}: its result nests too deep (${deep} ${PAST_PYTHON_DEPTH})`)
        },
        (error) => resolve(`e${messageOf(error)}`),
      )
    })
}

/**
 * A genuine image in a tool's result crosses as an object the prelude turns into its `Image`:
 * a handle into this run's images, and the fields a program reads. A result that spells the
 * same object itself can only name an image the run already has.
 */
function imagesForPython(value: object): object {
  if (!isGenuine(value)) return value
  const images = runImages
  const handle = images.length
  images[handle] = value
  const fields: Record<string, string | number> = { [imageKeyOf()]: handle, path: value.path, width: value.width, height: value.height, mediaType: value.mediaType }
  if (value.name !== undefined) fields.name = value.name
  return fields
}

function randomHex(): string {
  const bytes = new Uint8ArrayOf(16)
  getRandomValues(webCrypto, bytes)
  let hex = ''
  for (let index = 0; index < bytes.length; index++) hex += (bytes[index]! < 16 ? '0' : '') + numberToString(bytes[index]!, 16)
  return hex
}
