/**
 * Portable binding names: one binding list must be valid on every backend, JavaScript and
 * Python alike, so a global or error-class name must be an ASCII identifier that is a reserved
 * word in neither language, names no slot a runtime owns and no built-in global a program relies
 * on. Member names are free-form. A
 * provider calls `validateBindings` before a run, so a bad name rejects the run, naming itself.
 */
import type { PtcBindingNamespace } from './types.js'

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** ECMAScript reserved and strict-reserved words, plus Python keywords and soft keywords. */
export const PORTABLE_RESERVED_WORDS: ReadonlySet<string> = new Set([
  // ECMAScript
  'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete',
  'do', 'else', 'enum', 'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'import',
  'in', 'instanceof', 'new', 'null', 'return', 'super', 'switch', 'this', 'throw', 'true', 'try',
  'typeof', 'var', 'void', 'while', 'with', 'yield', 'let', 'static', 'implements', 'interface',
  'package', 'private', 'protected', 'public', 'arguments', 'eval',
  // Python
  'False', 'None', 'True', 'and', 'as', 'assert', 'async', 'def', 'del', 'elif', 'except', 'from',
  'global', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'match', 'type', '_',
])

/** The name of the hook object our lowered programs receive; programs must not shadow it. */
export const BOOTSTRAP_NAME = '__ptc__'

/** Global slots the runtimes own. */
export const RESERVED_BINDING_GLOBALS: ReadonlySet<string> = new Set([
  'console', 'inspect', 'Image', '__builtins__', '__name__', '__debug__', BOOTSTRAP_NAME,
])

/**
 * Globals of a fresh worker realm that a binding cannot take. `undefined`, `NaN` and `Infinity`
 * are non-writable and non-configurable, so defining a namespace there fails and every run of
 * the environment would be refused (test/seam/realm-globals.test.ts derives them from a real
 * worker realm, so a Node version that fixes another global fails that test). `globalThis` is
 * how the runtime reaches the global object to install bindings at all.
 */
export const FIXED_REALM_GLOBALS: ReadonlySet<string> = new Set(['undefined', 'NaN', 'Infinity', 'globalThis'])

/**
 * The built-in globals of the program's realm on every supported Node version (20 to 26): the
 * ECMAScript globals, the web platform's and Node's own. A binding of one of these names would
 * replace what the program relies on (`JSON.stringify is not a function`; an MCP server mounted
 * as `fetch` breaks `fetch`), so it is refused. test/seam/realm-globals.test.ts checks that a
 * fresh worker realm of the running Node has no global outside this list and the sets above.
 */
export const REALM_BUILTIN_GLOBALS: ReadonlySet<string> = new Set([
  // ECMAScript
  'AggregateError', 'Array', 'ArrayBuffer', 'AsyncDisposableStack', 'Atomics', 'BigInt', 'BigInt64Array',
  'BigUint64Array', 'Boolean', 'DataView', 'Date', 'DisposableStack', 'Error', 'EvalError',
  'FinalizationRegistry', 'Float16Array', 'Float32Array', 'Float64Array', 'Function', 'Int16Array',
  'Int32Array', 'Int8Array', 'Intl', 'Iterator', 'JSON', 'Map', 'Math', 'Number', 'Object', 'Promise',
  'Proxy', 'RangeError', 'ReferenceError', 'Reflect', 'RegExp', 'Set', 'SharedArrayBuffer', 'String',
  'SuppressedError', 'Symbol', 'SyntaxError', 'Temporal', 'TypeError', 'URIError', 'Uint16Array',
  'Uint32Array', 'Uint8Array', 'Uint8ClampedArray', 'WeakMap', 'WeakRef', 'WeakSet', 'WebAssembly',
  'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'isFinite', 'isNaN',
  'parseFloat', 'parseInt', 'unescape',
  // The web platform, as Node exposes it
  'AbortController', 'AbortSignal', 'Blob', 'BroadcastChannel', 'ByteLengthQueuingStrategy', 'CloseEvent',
  'CompressionStream', 'CountQueuingStrategy', 'Crypto', 'CryptoKey', 'CustomEvent', 'DOMException',
  'DecompressionStream', 'ErrorEvent', 'Event', 'EventSource', 'EventTarget', 'File', 'FormData', 'Headers',
  'MessageChannel', 'MessageEvent', 'MessagePort', 'Navigator', 'Performance', 'PerformanceEntry',
  'PerformanceMark', 'PerformanceMeasure', 'PerformanceObserver', 'PerformanceObserverEntryList',
  'PerformanceResourceTiming', 'QuotaExceededError', 'ReadableByteStreamController', 'ReadableStream',
  'ReadableStreamBYOBReader', 'ReadableStreamBYOBRequest', 'ReadableStreamDefaultController',
  'ReadableStreamDefaultReader', 'Request', 'Response', 'Storage', 'SubtleCrypto', 'TextDecoder',
  'TextDecoderStream', 'TextEncoder', 'TextEncoderStream', 'TransformStream', 'TransformStreamDefaultController',
  'URL', 'URLPattern', 'URLSearchParams', 'WebSocket', 'WritableStream', 'WritableStreamDefaultController',
  'WritableStreamDefaultWriter', 'atob', 'btoa', 'clearInterval', 'clearTimeout', 'crypto', 'fetch',
  'localStorage', 'navigator', 'performance', 'queueMicrotask', 'sessionStorage', 'setInterval',
  'setTimeout', 'structuredClone',
  // Node
  'Buffer', 'clearImmediate', 'global', 'process', 'require', 'module', 'exports', '__dirname',
  '__filename', 'setImmediate',
])

/** Error members an `errorClass.memberNameProperty` may not take over. */
export const RESERVED_ERROR_MEMBERS: ReadonlySet<string> = new Set([
  'name', 'message', 'stack', 'args', 'with_traceback', 'add_note',
])

/** Python dunder names (`__x__`): never usable as an error member property. */
export const DUNDER_MEMBER = /^__.+__$/

function usableIdentifier(name: unknown): name is string {
  return typeof name === 'string' && IDENTIFIER.test(name) && !PORTABLE_RESERVED_WORDS.has(name)
}

function refuseRealmGlobal(what: string, name: string): void {
  if (FIXED_REALM_GLOBALS.has(name)) {
    throw new TypeError(`${what} "${name}" names a global of the JavaScript realm that cannot be replaced; choose another name`)
  }
  if (REALM_BUILTIN_GLOBALS.has(name)) {
    throw new TypeError(`${what} "${name}" would replace the built-in global ${name} that programs rely on; choose another name`)
  }
}

const RULE = `must match ${IDENTIFIER.source.slice(1, -1)} and not be a reserved word`

/**
 * Checks a binding list against the portable-name rules and throws an Error naming the
 * offending name and the rule it breaks. Member names in `functions` are free-form.
 */
export function validateBindings(bindings: readonly PtcBindingNamespace[]): void {
  if (!Array.isArray(bindings)) throw new TypeError('bindings must be an array of namespaces')
  const taken = new Set<string>()
  for (let index = 0; index < bindings.length; index++) {
    const namespace = bindings[index]!
    if (typeof namespace !== 'object' || namespace === null) {
      throw new TypeError('each binding namespace must be an object')
    }
    const group = toolGroupGlobal(namespace)
    if (group !== undefined) {
      throw new TypeError(`bindings[${index}] is ${group}, not a binding namespace: pass its .namespace (bindings: [group.namespace])`)
    }
    const global = namespace.global
    if (!usableIdentifier(global)) throw new Error(`binding global ${JSON.stringify(global)} ${RULE}`)
    if (RESERVED_BINDING_GLOBALS.has(global)) {
      throw new Error(`binding global "${global}" is reserved by the runtime`)
    }
    refuseRealmGlobal('binding global', global)
    if (taken.has(global)) throw new Error(`binding global "${global}" is declared twice`)
    taken.add(global)
    if (typeof namespace.functions !== 'object' || namespace.functions === null) {
      throw new TypeError(`binding global "${global}" must have a functions object`)
    }
    for (const member of Object.keys(namespace.functions)) {
      if (typeof namespace.functions[member] !== 'function') {
        throw new TypeError(`binding "${global}.${member}" must be a function`)
      }
    }
    checkLimits(global, namespace)
    if (namespace.convertResults !== undefined && typeof namespace.convertResults !== 'boolean') {
      throw new TypeError(`binding global "${global}" has convertResults that is not a boolean`)
    }
  }
  for (const { global, errorClass } of bindings) {
    if (errorClass === undefined) continue
    if (typeof errorClass !== 'object' || errorClass === null) {
      throw new TypeError(`binding global "${global}" has an errorClass that is not an object`)
    }
    const { name, memberNameProperty: member } = errorClass
    if (!usableIdentifier(name)) throw new Error(`binding error class ${JSON.stringify(name)} ${RULE}`)
    if (RESERVED_BINDING_GLOBALS.has(name)) {
      throw new Error(`binding error class "${name}" is reserved by the runtime`)
    }
    refuseRealmGlobal('binding error class', name)
    if (taken.has(name)) {
      throw new Error(`binding error class "${name}" collides with another injected global`)
    }
    taken.add(name)
    if (typeof member !== 'string' || member === '' || RESERVED_ERROR_MEMBERS.has(member) || DUNDER_MEMBER.test(member)) {
      throw new Error(
        `binding error member property ${JSON.stringify(member)} of "${name}" must be a non-empty string, ` +
          `not one of ${[...RESERVED_ERROR_MEMBERS].join(', ')} and not a __dunder__ name`,
      )
    }
  }
}

/** A tool group passed where a namespace belongs (it holds one), described for the message. */
function toolGroupGlobal(value: object): string | undefined {
  if ('global' in value || !('namespace' in value)) return undefined
  const inner = (value as { namespace: unknown }).namespace
  if (typeof inner !== 'object' || inner === null) return undefined
  const global = (inner as { global?: unknown }).global
  const origin = '(what defineToolGroup, mcpToolGroup and fromAiSdkTools return)'
  return typeof global === 'string' && usableIdentifier(global) ? `the tool group "${global}" ${origin}` : `a tool group ${origin}`
}

/** A member's budgets are positive integers, and only declared members have them. */
function checkLimits(global: string, namespace: PtcBindingNamespace): void {
  const { limits } = namespace
  if (limits === undefined) return
  if (typeof limits !== 'object' || limits === null) throw new TypeError(`binding global "${global}" has limits that are not an object`)
  for (const member of Object.keys(limits)) {
    if (!Object.hasOwn(namespace.functions, member)) throw new Error(`binding global "${global}" has limits for "${member}", which is not one of its functions`)
    const entry = limits[member]
    if (typeof entry !== 'object' || entry === null) throw new TypeError(`limits of "${global}.${member}" must be an object`)
    for (const field of ['timeoutMs', 'maxResultBytes', 'maxArgumentBytes'] as const) {
      const value = entry[field]
      // setTimeout clamps longer delays to 1 ms.
      const max = field === 'timeoutMs' ? 2_147_483_647 : Number.MAX_SAFE_INTEGER
      if (value !== undefined && !(Number.isSafeInteger(value) && value > 0 && value <= max)) {
        throw new TypeError(`limits of "${global}.${member}": ${field} must be a positive integer up to ${max}, got ${String(value)}`)
      }
    }
  }
}
