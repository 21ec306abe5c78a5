/**
 * The hostile-program corpus: one small program per file in `corpus/`, each opening with a
 * header of `// key: value` lines that states the attack and what the runtime must answer.
 * Shared by the table-driven test (corpus.test.ts) and the soak run (bench/soak.mjs), so it is
 * plain JavaScript.
 *
 * Header keys (a `[qualifier]` names a host, a format, or both joined by `+`, and overrides the
 * plain key where it matches):
 *   attack       what the program tries (required)
 *   expect       the failure kind, or `ok` when the attack must be harmless (required); `a|b` when
 *                either of two mechanisms may stop it first (the attack line says why)
 *   formats      `all` (default) or a comma list of program formats the program makes sense in
 *   hosts        `all` (default) or a comma list of `thread` (the in-process worker, `isolation:
 *                'thread'`), `process` (a helper process per environment with `sandbox:
 *                'none'`: unconfined, the deployer's explicit opt-out) and `confined` (a helper
 *                process under the default confinement, no `sandbox` configured)
 *   prelude      a file in `preludes/` prepended to the program (`hijack`: forge channel traffic)
 *   timeout      the run's timeoutMs (default CORPUS_CONFIG.timeoutMs)
 *   value        JSON the completion must equal (with `expect: ok`)
 *   value-depth  the completion must be arrays nested exactly this deep
 *   output       a regular expression the concatenated text output must match
 *   message      a regular expression the failure message must match
 *   requires     a command that must be on PATH (such as a C compiler); without it the case is skipped
 *   follow-up    how the owner's next run ends in retained formats: a kind (default ok), or
 *                `fresh` (it succeeds in a fresh environment, after the lost-state notice)
 *   follow-up-timeout  the timeoutMs of the owner's next run (default CORPUS_CONFIG.timeoutMs)
 *   pause        milliseconds to wait before the owner's next run
 *   hold         how the runner answers each held call (`tools.gated`) of a paused result:
 *                `approve` or `refuse`; the checks then apply to the run's last answer
 *   hold-wait    milliseconds the runner waits before answering a held call (default 0)
 *   durable      `yes`: the run pauses durably (`pause: 'durable'`), and each answer resumes its
 *                token in a fresh environment, with the corpus tools as its bindings (one-shot
 *                formats only: a retained format's state owner cannot pause durably)
 *   known-bug    a runtime bug this program exposes: the case is expected to fail until fixed
 *   alone        `alone[thread]: why`: on that host the case runs while no other case runs (what it
 *                triggers there cannot tell one program from another, such as the RSS backstop)
 *   config       JSON merged into the runtime's configuration: the case runs on a runtime of its
 *                own (started for it and disposed after), as when an attack needs the default
 *                budgets rather than the corpus's small ones
 *   bystander    milliseconds: when the program calls `await tools.beside('__MARKER__')` (right
 *                before its attack), another conversation's run starts on the same runtime, a
 *                program that never settles with this time budget; the call returns once that
 *                program runs, and it must end as `timeout` within TIMEOUT_SLACK_MS of its budget;
 *                from then until the case's run ends, the host's event loop must never be held
 *                longer than TIMEOUT_SLACK_MS either (the bystander's deadline may fall before or
 *                after the attack's heavy part: the loop's delay catches it wherever it falls)
 *   heap         MiB: how far the host's own heap (its main thread's, sampled every 10 ms) may rise
 *                while the case's run is in progress, above its lowest point so far; the case runs
 *                alone on every host (other cases' work would colour the measure)
 *   busy         milliseconds: how long the host's event loop may be busy (its main thread's
 *                active time, `eventLoopUtilization`) while the case's run is in progress: the
 *                host's own work, which neither the machine's other load nor a thread worker's
 *                time counts in; the case runs alone on every host, like `heap`
 *   known-limit  what a host, by design, cannot stop (`known-limit[thread]`: a worker thread shares
 *                the host's process); the case never runs there, and the README names the limit
 *
 * Python cases are `.py` files with the same header in `# key: value` lines; they run as
 * `language: 'python'` requests, in the function-body format on the thread and confined hosts
 * unless their header narrows that (what Python adds is the interpreter and its FFI, which these
 * two hosts bound at both ends of the trust range; the helper's own paths are the JavaScript
 * cases'). `__HOST__`, `__MARKER__`, `__HOST_CWD__` and the sleep markers are filled in as for
 * JavaScript; a `prelude` becomes the Python string `PRELUDE`, which the case runs as JavaScript
 * (`pyodide.code.run_js`), since Python reaches all of JavaScript. Python cases that must not time out carry a `timeout` of 15 s: a fresh Python
 * environment restores its interpreter before it runs, which takes seconds on a loaded machine.
 *
 * Program text conventions: a line starting with `/* completion *\/` holds the completion
 * expression. It becomes `return` in `function-body` and `;` elsewhere (so the line can never
 * continue the statement above it), and every format sees the same completion value;
 * `__HOST__` becomes the host's name (`thread`, `process`, `confined` or `stream`); `__HOST_CWD__` the
 * runner's working directory (the host's, which holds its code and configuration);
 * `__SLEEP__` and `__SLEEP_SHORT__` become `sleep` durations carrying a per-case marker, so the
 * runner can find any process the program left behind.
 *
 * Every case is also checked for what no program may do on any host: put the host's secret
 * (HOST_SECRET, planted in the host's environment before any runtime starts) anywhere in its
 * result, set a global of the host, or leave a debugger listening in the host.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import { isDeepStrictEqual } from 'node:util'

export const FORMATS = ['function-body', 'script', 'repl', 'scoped-repl']
export const HOSTS = ['thread', 'process', 'confined', 'stream']
/**
 * The stream host runs the process host's helper, unconfined, at the end of a local stream: what
 * a case says of the process host holds for it too, unless the case says otherwise of it.
 */
const LIKE = { stream: 'process' }
const KINDS = ['ok', 'exception', 'timeout', 'abort', 'worker-exit', 'invalid-output', 'output-limit', 'protocol', 'sandbox-unavailable']
/** Kinds after which a retained environment is discarded (its next run gets a notice). */
export const DISCARDING = new Set(['timeout', 'abort', 'worker-exit', 'protocol', 'output-limit'])

/** The runtime configuration the corpus is written against (plus `programFormat` and a host). */
export const CORPUS_CONFIG = {
  timeoutMs: 5000,
  maxOutputBytes: 65536,
  maxOldGenerationSizeMb: 64,
  // A small budget for everything a program allocates, so the memory cases stay cheap here.
  maxMemoryMb: 256,
  maxPendingCalls: 16,
  // Small, so a case that starts processes without end stops early here.
  maxProcesses: 128,
  // Small, so a case that fills the budget of call arguments in flight stays cheap here.
  maxPendingCallBytes: 1024 * 1024,
  retainState: true,
  poolSize: 2,
  // Signs the tokens of the cases that pause durably (`durable: yes`).
  durableKey: 'the hostile corpus signs its durable tokens with this',
}

/**
 * A secret the host holds in its environment (`process.env[HOST_SECRET.name]`), planted by the
 * runner before any runtime starts: no program may ever see it.
 */
export const HOST_SECRET = { name: 'PTC_CORPUS_SECRET', value: `ptc-corpus-secret-${String(Math.random()).slice(2, 14)}` }
/** A global of the host that a program reaching into the host would set (cases use this name). */
const HOST_GLOBAL = 'ptcCorpusPwned'

/** Plants HOST_SECRET in this process's environment; call before starting the runtimes. */
export function plantHostSecret() {
  process.env[HOST_SECRET.name] = HOST_SECRET.value
}

/** How late a `timeout` result may arrive after its budget, on a loaded two-core machine. */
export const TIMEOUT_SLACK_MS = 3000
/**
 * More for a Python case: its run may wait for a fresh environment to restore its interpreter
 * (a third of a second idle, seconds on a loaded machine), which the time from `run` counts.
 */
const PYTHON_START_SLACK_MS = 5000

/** The host functions every corpus program may call. */
export const TOOLS = {
  global: 'tools',
  functions: {
    echo: async (value) => value,
    // The length of its argument's JSON: a large argument's receipt, without a large reply.
    measure: async (value) => JSON.stringify(value ?? null).length,
    delay: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(Number(ms) || 0, 1000), ms)),
    hang: () => new Promise(() => {}),
    fail: async (message) => {
      throw new Error(String(message))
    },
    // Rejects with, or resolves to, a value built to break whoever describes it (HOSTILE_VALUES).
    reject: async (kind) => {
      throw HOSTILE_VALUES[kind]()
    },
    resolveHostile: async (kind) => HOSTILE_VALUES[kind](),
    // Holds its call for a decision (the case's `hold` header answers it), then echoes.
    gated: async (value, call) => {
      await call.hold({ corpus: 'gated' })
      return value ?? null
    },
    // Starts the case's bystander (the `bystander` header), and returns once its program runs.
    beside: async (marker) => {
      await besides.get(String(marker))?.()
      return null
    },
    started: async (marker) => {
      programStarts.set(String(marker), performance.now())
      startWaiters.get(String(marker))?.()
      return null
    },
  },
}

const boom = () => {
  throw new Error('a hostile value ran code')
}
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}
/**
 * Values a tool may reject with or resolve (tools wrap remote services and libraries): each runs
 * code, throws or is exotic when a describer calls its methods, getters or traps.
 */
const HOSTILE_VALUES = {
  'null-prototype': () => Object.create(null),
  'message-getter': () => Object.defineProperty(new Error('hidden'), 'message', { get: boom }),
  'name-getter': () => Object.defineProperty(new Error('named'), 'name', { get: boom }),
  'proxy-error': () => new Proxy(new Error('proxied'), { get: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom, has: boom }),
  'revoked-proxy': revoked,
  'to-string-throws': () => ({ toString: boom, valueOf: boom }),
  'to-primitive-symbol': () => ({ [Symbol.toPrimitive]: () => Symbol('primitive') }),
  symbol: () => Symbol('thrown'),
  'message-not-string': () => Object.assign(new Error(), { message: { toString: boom } }),
  'prototype-proxy': () => Object.setPrototypeOf({}, new Proxy({}, { getPrototypeOf: boom, get: boom })),
  'throwing-getter': () => Object.defineProperty({}, 'value', { enumerable: true, get: boom }),
  'then-getter': () => Object.defineProperty({}, 'then', { get: boom }),
  'huge-message': () => new Error('x'.repeat(1 << 20)),
  'quiet-proxy': () => new Proxy({}, { ownKeys: boom, getOwnPropertyDescriptor: boom, getPrototypeOf: boom }),
}

/**
 * When each case's program started, by its marker: a program expected to time out reports it
 * first, so its lateness is measured from when it ran, not from a helper start on a loaded machine.
 */
const programStarts = new Map()
/** Bystanders a case may start, by its marker, and who waits for a program to start, by its marker. */
const besides = new Map()
const startWaiters = new Map()

const CORPUS_DIR = new URL('./corpus/', import.meta.url)
const PRELUDE_DIR = new URL('./preludes/', import.meta.url)

/** Python's defaults: function-body on the thread and confined hosts (see the header's comment). */
const PYTHON_FORMATS = ['function-body']
const PYTHON_HOSTS = ['thread', 'confined']

function parseHeader(file, text, comment) {
  const header = { plain: new Map(), qualified: new Map() }
  for (const line of text.split('\n')) {
    if (!line.startsWith(comment)) break
    const match = (comment === '#' ? /^# ([a-z-]+)(?:\[([a-z+-]+)\])?(?:: (.*))?$/ : /^\/\/ ([a-z-]+)(?:\[([a-z+-]+)\])?(?:: (.*))?$/).exec(line)
    if (!match) throw new Error(`${file}: malformed header line ${JSON.stringify(line)}`)
    const [, key, qualifier, value = ''] = match
    if (qualifier) {
      for (const part of qualifier.split('+')) {
        if (!FORMATS.includes(part) && !HOSTS.includes(part)) throw new Error(`${file}: unknown qualifier [${qualifier}]`)
      }
      header.qualified.set(`${key}[${qualifier}]`, value)
    } else {
      header.plain.set(key, value)
    }
  }
  return header
}

function listOf(value, allowed, file, key) {
  if (value === undefined || value === 'all') return [...allowed]
  const items = value.split(',').map((item) => item.trim())
  for (const item of items) if (!allowed.includes(item)) throw new Error(`${file}: ${key} names unknown ${JSON.stringify(item)}`)
  return items
}

/** `key[qualifier]` entries of a header as a map from qualifier to value. */
function qualifiedValues(qualified, key) {
  const prefix = `${key}[`
  return new Map([...qualified].filter(([name]) => name.startsWith(prefix)).map(([name, value]) => [name.slice(prefix.length, -1), value]))
}

/** The value of the first `[qualifier]` entry whose every part names `host` or `format`. */
function qualifiedFor(entries, host, format) {
  for (const [qualifier, value] of entries) {
    if (qualifier.split('+').every((part) => part === host || part === format)) return value
  }
  return LIKE[host] === undefined ? undefined : qualifiedFor(entries, LIKE[host], format)
}

/** Every corpus program, parsed and checked, in file order. */
export function loadCorpus() {
  const files = readdirSync(CORPUS_DIR).filter((file) => file.endsWith('.js') || file.endsWith('.py')).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
  return files.map((file) => {
    const source = readFileSync(new URL(file, CORPUS_DIR), 'utf8')
    const python = file.endsWith('.py')
    const { plain, qualified } = parseHeader(file, source, python ? '#' : '//')
    const attack = plain.get('attack')
    const expect = plain.get('expect')
    if (!attack) throw new Error(`${file}: the header must state the attack`)
    for (const kind of [expect, ...qualifiedValues(qualified, 'expect').values()].flatMap((kinds) => String(kinds).split('|'))) {
      if (!KINDS.includes(kind)) throw new Error(`${file}: expect must be one of ${KINDS.join(', ')}, got ${JSON.stringify(kind)}`)
    }
    const followUp = plain.get('follow-up')
    const followUps = qualifiedValues(qualified, 'follow-up')
    for (const value of [followUp, ...followUps.values()]) {
      if (value !== undefined && !KINDS.includes(value) && value !== 'fresh') throw new Error(`${file}: unknown follow-up ${value}`)
    }
    const hold = plain.get('hold')
    if (hold !== undefined && hold !== 'approve' && hold !== 'refuse') throw new Error(`${file}: hold must be approve or refuse, got ${JSON.stringify(hold)}`)
    const prelude = plain.get('prelude')
    const knownLimits = qualifiedValues(qualified, 'known-limit')
    for (const [qualifier] of knownLimits) {
      if (!HOSTS.includes(qualifier)) throw new Error(`${file}: known-limit must name one host, got [${qualifier}]`)
    }
    if (plain.has('known-limit')) throw new Error(`${file}: known-limit must name its host, as known-limit[thread]`)
    const alone = qualifiedValues(qualified, 'alone')
    for (const [qualifier] of alone) {
      if (!HOSTS.includes(qualifier)) throw new Error(`${file}: alone must name one host, got [${qualifier}]`)
    }
    const program = {
      name: file.replace(/\.(js|py)$/, ''),
      language: python ? 'python' : 'javascript',
      attack,
      expect,
      qualified,
      formats: listOf(plain.get('formats'), python ? PYTHON_FORMATS : FORMATS, file, 'formats'),
      // A host that cannot stop the attack never runs it (it would take the test process down).
      hosts: listOf(plain.get('hosts'), python ? PYTHON_HOSTS : HOSTS, file, 'hosts').filter((host) => !knownLimits.has(host)),
      knownLimits,
      alone,
      requires: plain.get('requires'),
      prelude: prelude === undefined ? '' : readFileSync(new URL(`${prelude}.js`, PRELUDE_DIR), 'utf8'),
      timeoutMs: plain.has('timeout') ? Number(plain.get('timeout')) : undefined,
      hasValue: plain.has('value'),
      value: plain.has('value') ? JSON.parse(plain.get('value')) : undefined,
      values: new Map([...qualifiedValues(qualified, 'value')].map(([qualifier, value]) => [qualifier, JSON.parse(value)])),
      valueDepth: plain.has('value-depth') ? Number(plain.get('value-depth')) : undefined,
      output: plain.has('output') ? new RegExp(plain.get('output')) : undefined,
      message: plain.has('message') ? new RegExp(plain.get('message')) : undefined,
      messages: new Map([...qualifiedValues(qualified, 'message')].map(([qualifier, value]) => [qualifier, new RegExp(value)])),
      followUp: followUp ?? 'ok',
      followUps,
      pauseMs: Number(plain.get('pause') ?? 0),
      hold: plain.get('hold'),
      holdWaitMs: Number(plain.get('hold-wait') ?? 0),
      durable: plain.get('durable') === 'yes',
      config: plain.has('config') ? JSON.parse(plain.get('config')) : undefined,
      bystanderMs: plain.has('bystander') ? Number(plain.get('bystander')) : undefined,
      heapMb: plain.has('heap') ? Number(plain.get('heap')) : undefined,
      busyMs: plain.has('busy') ? Number(plain.get('busy')) : undefined,
      followUpTimeoutMs: plain.has('follow-up-timeout') ? Number(plain.get('follow-up-timeout')) : undefined,
      knownBug: plain.get('known-bug'),
      knownBugs: qualifiedValues(qualified, 'known-bug'),
      expects: qualifiedValues(qualified, 'expect'),
      source,
    }
    return program
  })
}

/** Whether the case must run on `host` while no other case runs. */
export function runsAlone(program, host) {
  return program.heapMb !== undefined || program.busyMs !== undefined || program.alone.has(host) || program.alone.has(LIKE[host])
}

/** The bug a case is expected to expose on `host` in `format`, or undefined. */
export function knownBug(program, host, format) {
  return program.knownBug ?? qualifiedFor(program.knownBugs, host, format)
}

/** What `host` cannot stop of this attack, by design, or undefined. */
export function knownLimit(program, host) {
  return program.knownLimits.get(host) ?? (LIKE[host] === undefined ? undefined : program.knownLimits.get(LIKE[host]))
}

/** How the owner's next run must end after `program` on `host` in `format`. */
function followUpFor(program, host, format) {
  return qualifiedFor(program.followUps, host, format) ?? program.followUp
}

/** The kind `program` must end with on `host` in `format`. */
export function expectedKind(program, host, format) {
  return qualifiedFor(program.expects, host, format) ?? program.expect
}

/**
 * The program text for `format` on `host`, with its prelude and its sleep markers filled in; a
 * program expected to time out first reports that it started.
 */
export function programText(program, host, format, marker) {
  const completion = format === 'function-body' ? 'return ' : ';'
  const timesOut = expectedKind(program, host, format) === 'timeout'
  const start = timesOut ? `await tools.started('${marker}')${program.language === 'python' ? '' : ';'}\n` : ''
  // A Python case gets its (JavaScript) prelude as the string PRELUDE, to run with run_js.
  const prelude = program.language === 'python' && program.prelude !== '' ? `PRELUDE = ${JSON.stringify(program.prelude)}\n` : program.prelude
  return (start + prelude + program.source)
    .replace(/^\/\* completion \*\/ /gm, completion)
    .replaceAll('__HOST__', host)
    .replaceAll('__MARKER__', marker)
    .replaceAll('__HOST_CWD__', process.cwd())
    .replaceAll('__SLEEP_SHORT__', `6.${marker}`)
    .replaceAll('__SLEEP__', `60.${marker}`)
}

/** A `1 + 1` that completes with 2 in `format`. */
export function healthProgram(format) {
  return format === 'function-body' ? 'return 1 + 1' : '1 + 1'
}

/** Retained formats run each case under a fresh state owner; the others run one-shot. */
export function retains(format) {
  return format === 'repl' || format === 'scoped-repl'
}

/** A per-case marker: digits only, so it can sit in a `sleep` duration. */
export function newMarker() {
  return `${process.pid}${String(Math.random()).slice(2, 11)}`
}

function textOf(result) {
  return result.output.map((entry) => entry.text ?? '').join('')
}

function clip(text) {
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

function depthOf(value) {
  let depth = 0
  while (Array.isArray(value)) {
    value = value[0]
    depth++
  }
  return depth
}

/** UTF-8 bytes of `JSON.stringify(value)`, without recursion (completions nest thousands deep). */
function jsonBytes(value) {
  let bytes = 0
  const pending = [value]
  while (pending.length > 0) {
    const item = pending.pop()
    if (Array.isArray(item)) {
      bytes += 1 + Math.max(item.length - 1, 0) + 1
      pending.push(...item)
    } else if (typeof item === 'object' && item !== null) {
      const keys = Object.keys(item)
      bytes += 1 + Math.max(keys.length - 1, 0) + 1
      for (const key of keys) {
        bytes += Buffer.byteLength(JSON.stringify(key)) + 1
        pending.push(item[key])
      }
    } else {
      bytes += Buffer.byteLength(JSON.stringify(item))
    }
  }
  return bytes
}

/** Whether any string in `result` (keys included) contains HOST_SECRET, without recursion. */
function holdsSecret(result) {
  const pending = [result]
  while (pending.length > 0) {
    const item = pending.pop()
    if (typeof item === 'string') {
      if (item.includes(HOST_SECRET.value)) return true
    } else if (typeof item === 'object' && item !== null) {
      for (const key of Object.keys(item)) pending.push(key, item[key])
    }
  }
  return false
}

/** The ledger's view of a result: output entries plus the completion or failure message, as JSON. */
function ledgerBytes(result) {
  const entries = result.output.map((entry) => entry.text ?? entry.attachment)
  const tail = result.error ? result.error.message : result.value
  return jsonBytes(entries) + (tail === undefined ? 0 : jsonBytes(tail))
}

/**
 * Everything wrong with `result` as the answer to `program` on `host` in `format` (empty when
 * it is right). `elapsedMs` is how long the run took, `timeoutMs` its budget.
 */
export function checkResult(program, result, { host, format, elapsedMs, timeoutMs }) {
  const problems = []
  const expected = expectedKind(program, host, format)
  const actual = result.error?.kind ?? 'ok'
  if (!expected.split('|').includes(actual)) {
    problems.push(`expected ${expected}, got ${actual}${result.error ? `: ${clip(result.error.message)}` : ` (value ${clip(JSON.stringify(result.value) ?? 'absent')})`}`)
  }
  if (actual === 'ok' && expected === 'ok') {
    const qualifiedValue = qualifiedFor(program.values, host, format)
    const value = qualifiedValue ?? program.value
    if ((program.hasValue || qualifiedValue !== undefined) && !isDeepStrictEqual(result.value, value)) {
      problems.push(`expected the value ${JSON.stringify(value)}, got ${clip(JSON.stringify(result.value) ?? 'absent')}`)
    }
    if (program.valueDepth !== undefined && depthOf(result.value) !== program.valueDepth) {
      problems.push(`expected a value nested ${program.valueDepth} deep, got ${depthOf(result.value)}`)
    }
  }
  const message = qualifiedFor(program.messages, host, format) ?? program.message
  if (message && result.error && !message.test(result.error.message)) {
    problems.push(`the message ${JSON.stringify(clip(result.error.message))} does not match ${message}`)
  }
  if (program.output && !program.output.test(textOf(result))) {
    problems.push(`the output ${JSON.stringify(clip(textOf(result)))} does not match ${program.output}`)
  }
  if (actual === 'timeout' && elapsedMs > timeoutMs + TIMEOUT_SLACK_MS + (program.language === 'python' ? PYTHON_START_SLACK_MS : 0)) {
    problems.push(`the timeout result arrived after ${Math.round(elapsedMs)} ms for a ${timeoutMs} ms budget`)
  }
  // A case with a runtime of its own may set its own budget.
  const maxOutputBytes = program.config?.maxOutputBytes ?? CORPUS_CONFIG.maxOutputBytes
  if (ledgerBytes(result) > maxOutputBytes) {
    problems.push(`the result holds ${ledgerBytes(result)} bytes, over maxOutputBytes ${maxOutputBytes}`)
  }
  if (holdsSecret(result)) problems.push(`the result holds the host's secret ${HOST_SECRET.name}`)
  return problems
}

/** What the case did to the host process itself: a global set, a debugger left listening. */
async function hostProblems() {
  const problems = []
  if (Object.hasOwn(globalThis, HOST_GLOBAL)) {
    problems.push(`the program set the host's global ${HOST_GLOBAL}`)
    delete globalThis[HOST_GLOBAL]
  }
  const inspector = await import('node:inspector')
  if (inspector.url() !== undefined) {
    problems.push(`a debugger listens in the host at ${inspector.url()}`)
    inspector.close()
  }
  return problems
}

/** Live processes (not zombies) whose command line carries `marker`. */
export function markedProcesses(marker) {
  const found = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0]
      if (cmdline.includes(marker) && state !== 'Z') found.push(Number(entry))
    } catch {
      // exited while we looked
    }
  }
  return found
}

/**
 * Processes carrying `marker` that are still alive after `graceMs` (a confined host kills its
 * program's processes asynchronously). Survivors are killed before returning, so one failing
 * case cannot make later leak checks fail too.
 */
export async function survivingProcesses(marker, graceMs) {
  const deadline = Date.now() + graceMs
  let alive = markedProcesses(marker)
  while (alive.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    alive = markedProcesses(marker)
  }
  for (const pid of alive) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone meanwhile
    }
  }
  return alive
}

/** A run that has not settled this long after its budget is reported as hung. */
const HUNG_AFTER_MS = 60_000

/** `runtime.run` for one request, or a `hung` marker when it does not settle in time. */
async function runOnce(runtime, request, timeoutMs) {
  let timer
  const hung = new Promise((resolve) => {
    timer = setTimeout(resolve, timeoutMs + HUNG_AFTER_MS, 'hung')
  })
  try {
    return await Promise.race([runtime.run(runtime.resolve({ bindings: [TOOLS], timeoutMs, ...request })), hung])
  } finally {
    clearTimeout(timer)
  }
}

function describeResult(result) {
  if (result === 'hung') return 'a run that never settled'
  return result.error ? `${result.error.kind}: ${clip(result.error.message)}` : `ok ${clip(JSON.stringify(result.value) ?? 'absent')}`
}

const noticeOf = (result) => result.output[0]?.type === 'text' && result.output[0].text.startsWith('[earlier state was lost')

/** After a case: the runtime must still serve the next run, and a retained owner must recover. */
async function checkHealth(runtime, program, host, format, caseResult, owner, timeoutMs) {
  // In a retained environment the pause lets timers the case left behind fire while the next
  // run is in progress.
  const source = owner ? `await tools.delay(50)\n${healthProgram(format)}` : healthProgram(format)
  const request = { program: source, ...(owner ? { stateOwner: owner } : {}) }
  if (owner && program.pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, program.pauseMs))
  // The next run gets at least the default budget (a loaded machine needs it), unless the case
  // says otherwise for its owner's next run.
  const nextTimeoutMs = owner && program.followUpTimeoutMs !== undefined ? program.followUpTimeoutMs : Math.max(timeoutMs, CORPUS_CONFIG.timeoutMs)
  const next = await runOnce(runtime, request, nextTimeoutMs)
  const healthy = (result) => result !== 'hung' && !result.error && result.value === 2
  if (!owner) return healthy(next) ? [] : [`the next one-shot run failed: ${describeResult(next)}`]
  const problems = []
  const discarded = caseResult !== 'hung' && DISCARDING.has(caseResult.error?.kind ?? 'ok')
  const follow = followUpFor(program, host, format)
  if (follow === 'ok' || follow === 'fresh') {
    const fresh = follow === 'fresh' || discarded
    if (!healthy(next)) problems.push(`the owner's next run failed: ${describeResult(next)}`)
    else if (noticeOf(next) !== fresh) problems.push(`the owner's next run ${fresh ? 'lacks' : 'has'} the lost-state notice`)
    return problems
  }
  if (next === 'hung' || (next.error?.kind ?? 'ok') !== follow) problems.push(`expected the owner's next run to end in ${follow}, got ${describeResult(next)}`)
  if (!DISCARDING.has(follow)) return problems
  const recovered = await runOnce(runtime, request, Math.max(timeoutMs, CORPUS_CONFIG.timeoutMs))
  if (!healthy(recovered) || !noticeOf(recovered)) problems.push(`the owner's environment did not recover: ${describeResult(recovered)}`)
  return problems
}

/**
 * Another conversation's run beside a case: it must end as `timeout` on time, whatever the case
 * makes the host do. Its problems, if any.
 */
async function runBystander(runtime, timeoutMs, marker) {
  const bystander = `bystander-${marker}`
  const result = await runOnce(runtime, { program: `await tools.started('${bystander}')\nawait new Promise(() => {})` }, timeoutMs)
  const elapsedMs = performance.now() - (programStarts.get(bystander) ?? 0)
  programStarts.delete(bystander)
  startWaiters.delete(bystander)
  if (result === 'hung' || result.error?.kind !== 'timeout') return [`another conversation's run ended in ${describeResult(result)}, not timeout`]
  if (elapsedMs > timeoutMs + TIMEOUT_SLACK_MS) return [`another conversation's ${timeoutMs} ms deadline fired after ${Math.round(elapsedMs)} ms`]
  return []
}

/**
 * Runs `program` once on `runtime` (a PtcRuntime configured with CORPUS_CONFIG and `format`),
 * then checks the result, the processes it left, and the runtime's health. Never rejects.
 */
/**
 * The host's event-loop delay while a bystander runs beside an attack. One for the module: a
 * histogram stays a live handle until it is collected, enabled or not, and the cases that
 * measure run alone, one at a time.
 */
const loopDelay = monitorEventLoopDelay({ resolution: 10 })

/**
 * Watches how far the host's own heap rises while a case runs: above its lowest point so far, so
 * that garbage of earlier cases collected meanwhile neither hides a rise nor counts as one.
 * `stop` says the most, in MiB.
 */
function heapRise() {
  let least = Infinity
  let rise = 0
  const sample = () => {
    const used = getHeapStatistics().used_heap_size
    least = Math.min(least, used)
    rise = Math.max(rise, used - least)
  }
  sample()
  const timer = setInterval(sample, 10)
  return {
    stop: () => {
      clearInterval(timer)
      sample()
      return rise / 2 ** 20
    },
  }
}

export async function runCase(runtime, { host, format, program }) {
  const marker = newMarker()
  const timeoutMs = program.timeoutMs ?? CORPUS_CONFIG.timeoutMs
  const owner = retains(format) ? {} : undefined
  const problems = []
  let result = 'hung'
  try {
    const started = performance.now()
    const pause = program.durable ? { pause: 'durable' } : {}
    let bystander
    if (program.bystanderMs !== undefined) {
      besides.set(marker, () => {
        const started = new Promise((resolve) => startWaiters.set(`bystander-${marker}`, resolve))
        bystander = runBystander(runtime, program.bystanderMs, marker)
        return started.then(() => {
          loopDelay.reset()
          loopDelay.enable()
        })
      })
    }
    const language = program.language === 'python' ? { language: 'python' } : {}
    const heap = program.heapMb === undefined ? undefined : heapRise()
    const busySince = performance.eventLoopUtilization()
    result = await runOnce(runtime, { program: programText(program, host, format, marker), ...language, ...(owner ? { stateOwner: owner } : {}), ...pause }, timeoutMs)
    const busyMs = performance.eventLoopUtilization(busySince).active
    if (program.busyMs !== undefined && busyMs > program.busyMs) problems.push(`the host's event loop was busy ${Math.round(busyMs)} ms during the attack, over ${program.busyMs} ms`)
    if (heap) {
      const roseMb = heap.stop()
      if (roseMb > program.heapMb) problems.push(`the host's heap rose ${Math.round(roseMb)} MiB during the attack, over ${program.heapMb} MiB`)
    }
    loopDelay.disable()
    besides.delete(marker)
    const heldMs = program.bystanderMs === undefined ? 0 : loopDelay.max / 1e6
    if (heldMs > TIMEOUT_SLACK_MS) problems.push(`the host's event loop was held ${Math.round(heldMs)} ms at once during the attack`)
    if (program.bystanderMs !== undefined) problems.push(...(bystander ? await bystander : ['the program never called tools.beside']))
    // A held call is answered as the case says, as often as the run pauses; the waits are not
    // the program's time.
    let waitedMs = 0
    for (let answers = 0; result !== 'hung' && result.paused && answers < 8; answers++) {
      if (!program.hold) {
        problems.push(`the run paused on ${result.paused.tool}, but the case has no hold header`)
        break
      }
      await new Promise((resolve) => setTimeout(resolve, program.holdWaitMs))
      waitedMs += program.holdWaitMs
      const decision = program.hold === 'approve' ? { approve: true } : { approve: false, reason: 'refused by the corpus' }
      result = await runtime.resume(result.paused.id, decision, program.durable ? { bindings: [TOOLS] } : {})
    }
    if (result !== 'hung' && result.paused) problems.push('the run was still paused after 8 answers')
    const elapsedMs = performance.now() - (programStarts.get(marker) ?? started) - waitedMs
    programStarts.delete(marker)
    if (result === 'hung') problems.push(`the run did not settle within ${timeoutMs + HUNG_AFTER_MS} ms`)
    else problems.push(...checkResult(program, result, { host, format, elapsedMs, timeoutMs }))
    // The thread host kills a run's processes before resolving it; a helper process does it on
    // its own schedule, so it gets a short grace.
    const survivors = await survivingProcesses(marker, host === 'thread' ? 100 : 2000)
    if (survivors.length > 0) problems.push(`${survivors.length} process(es) it started outlived the run`)
    problems.push(...(await hostProblems()))
    problems.push(...(await checkHealth(runtime, program, host, format, result, owner, timeoutMs)))
  } catch (error) {
    problems.push(`the case threw: ${error?.stack ?? error}`)
  } finally {
    loopDelay.disable()
    if (owner) await runtime.release(owner)
  }
  return { result, problems }
}
