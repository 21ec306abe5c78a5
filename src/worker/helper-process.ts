/**
 * The process tier's helper, when this bundle is the helper process itself (`node worker.cjs
 * OPTIONS`, src/host/environments/process/environment.ts): the program's realm is the process's
 * main thread, with no worker thread of its own. A worker's start is most of a fresh helper's
 * (docs/confined-start.md); in its own process the program needs none of what a worker adds.
 * What the worker gave, and what stands for it here:
 *
 * - its heap cap (`resourceLimits`): the host starts this process with `--max-old-space-size`
 *   and the kernel caps its writable memory (`ulimit -d`) as before; a heap that reaches its
 *   limit ends the process, and V8's report on stderr makes it a memory failure on the host.
 * - its exit, reported by the helper's main thread: an `exit` frame written while the process
 *   exits (process.exit, or a crash the program left unhandled), and the process then ends even
 *   when the program emitted the event itself; whatever ends the process otherwise, the host sees
 *   the process end.
 * - the thread that outlived the program to speak for it: nothing here does, and nothing needed
 *   to. The helper's main thread was in the program's trust domain already (the program could
 *   write any frame to the channel): the host reads every frame as hostile input, and ends the
 *   helper and what it started from outside.
 * - a process object whose process-wide state the program cannot change: the same methods
 *   refused as in a worker, with Node's own error (`process.chdir` is world.ts's emulation), and
 *   Node's trace events, whose thread writes logs where no sweep looks.
 *
 * This code shares the program's realm, so it calls only what it captured (src/intrinsics.ts).
 */
import { closeSync, readFileSync, readdirSync } from 'node:fs'
import { types } from 'node:util'
import { CHANNEL_FD, type HelperFrame, type HelperOptions, INBOX_FD, PYTHON_SNAPSHOT_FD } from '../protocol/frames.js'
import type { HostMessage } from '../protocol/messages.js'
import { jsonText } from '../json/text.js'
import { createFrameLock, writeFrame } from './channel.js'
import { readInbox } from './inbox.js'
import { ErrorOf, dataProperty, defineProperty, endThread, getOwnPropertyDescriptor, ownKeys, realmProcess, uncurryThis, withCode } from './intrinsics.js'
import { channelOutbox } from './outbox.js'
import { describeThrown } from './stack.js'
import type { EnvironmentLink } from './thread-link.js'

const parse = JSON.parse
const { deleteProperty } = Reflect
const isNativeError = types.isNativeError
const schedule = queueMicrotask
const realCwd = process.cwd
const realChdir = process.chdir
const on = process.on.bind(process)
const reallyExit = (process as unknown as { reallyExit: (code: number) => never }).reallyExit
const slice = uncurryThis(String.prototype.slice)

/** The longest exit description sent: a crash's message is the program's text. */
const MAX_EXIT_TEXT = 2_000

/** What Node's worker threads refuse, since they do not own the process's state. */
const PROCESS_WIDE = ['abort', 'umask', 'setuid', 'setgid', 'seteuid', 'setegid', 'setgroups', 'initgroups']

/**
 * The link of the helper process this bundle runs as, from its command line. Call once, before
 * anything replaces `process.cwd` (world.ts).
 */
export function helperProcessLink(): EnvironmentLink {
  const options = parse(realmProcess.argv[2] ?? '{}') as HelperOptions
  // One thread writes here; the lock is kept for the outbox's sake (channel.ts).
  const lock = createFrameLock()
  let ending = false
  const send = (frame: HelperFrame) => {
    if (ending) return
    try {
      writeFrame(CHANNEL_FD, lock, `${jsonText(frame)}\n`)
    } catch {
      end() // the host closed the channel
    }
  }
  const torn = () => send({ type: 'forged' })
  /** The host closed the channel (or vanished): nothing here outlives it. */
  const end = () => {
    ending = true
    endThread()
  }
  clearEnvironment()
  closeInheritedDescriptors(options.pythonSnapshot ? GIVEN_WITH_PYTHON : GIVEN)
  refuseProcessWideState()
  reportExit(send)
  return {
    outbox: channelOutbox(CHANNEL_FD, lock),
    sharesHostProcess: false,
    subprocessMarker: options.subprocessMarker,
    rehearsal: options.rehearsal,
    framed: true,
    pythonSnapshot: options.pythonSnapshot,
    serve(receive) {
      // A run on the channel is one whose cwd the helper is not in: it moves there first, so the
      // program has a real working directory. Runs in the same cwd and replies take the inbox.
      const relay = (message: HostMessage) => {
        if (message.type === 'run' && realCwd() !== message.cwd) {
          try {
            realChdir(message.cwd)
          } catch (error) {
            const reason = (error as NodeJS.ErrnoException).code ?? 'it cannot be entered'
            return send({ type: 'refused', message: `the run's cwd ${message.cwd} cannot be entered in this environment (${reason})` })
          }
        }
        receive(message)
      }
      readInbox(CHANNEL_FD, relay, torn, end)
      readInbox(INBOX_FD, receive, torn)
      send({ type: 'ready', cwd: realCwd() })
    },
  }
}

/**
 * The host starts the helper with an empty environment, as a worker was given, but the shells
 * on the way (the limits script, bubblewrap's inner one) add to it (`PWD`): a program sees none.
 */
function clearEnvironment(): void {
  const env = realmProcess.env
  const names = ownKeys(env)
  for (let at = 0; at < names.length; at++) deleteProperty(env, names[at]!)
}

/** `O_CLOEXEC`, as `/proc/self/fdinfo` prints open flags (octal). */
const O_CLOEXEC = 0o2000000
/** The descriptors the host gives every helper: stdio, the channel, the inbox; and to some, Python's snapshot. */
const GIVEN = [0, 1, 2, CHANNEL_FD, INBOX_FD]
const GIVEN_WITH_PYTHON = [0, 1, 2, CHANNEL_FD, INBOX_FD, PYTHON_SNAPSHOT_FD]

/**
 * Closes every descriptor the helper inherited but the host did not give it. A host inherits
 * descriptors from whatever started it (a shell's redirection, a supervisor's sockets) without
 * close-on-exec, and every process it spawns inherits them in turn, through bubblewrap: one that
 * leads to a directory outside the sandbox would let a program write there through
 * `/proc/self/fd`. Node opens its own with close-on-exec, which tells them apart.
 */
function closeInheritedDescriptors(given: readonly number[]): void {
  /* eslint-disable hostile-realm/captured-builtins -- called once as the helper starts, before any program */
  const entries = readdirSync('/proc/self/fd')
  for (let at = 0; at < entries.length; at++) {
    const fd = Number(entries[at])
    if (given.includes(fd)) continue
    let flags: number
    try {
      flags = parseInt(/^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '0', 8)
    } catch {
      continue // the listing's own descriptor, closed by now
    }
    if ((flags & O_CLOEXEC) === 0) closeSync(fd)
  }
  /* eslint-enable hostile-realm/captured-builtins */
}

/** Node's `unavailable()` for process-wide state in a worker, kept so a program sees one runtime on every tier. */
function refuseProcessWideState(): void {
  refuseTraceEvents()
  for (let at = 0; at < PROCESS_WIDE.length; at++) {
    const name = PROCESS_WIDE[at]!
    const real = (realmProcess as unknown as Record<string, unknown>)[name]
    if (typeof real !== 'function') continue
    const refused = function (this: unknown, ...args: unknown[]) {
      // `process.umask()` only reads, and a worker allows that.
      if (name === 'umask' && args.length === 0) return (real as () => number)()
      throw withCode(new ErrorOf(`process.${name}() is not supported in workers`), 'ERR_WORKER_UNSUPPORTED_OPERATION')
    }
    defineProperty(realmProcess, name, dataProperty(refused, true, true, true))
  }
}

/**
 * Node's trace events: a worker refuses the module as it loads (`ERR_TRACE_EVENTS_UNAVAILABLE`).
 * Here its functions refuse, before any program imports it (an import copies them then).
 */
function refuseTraceEvents(): void {
  // Required here, not imported: a worker cannot load the module at all.
  // eslint-disable-next-line hostile-realm/captured-builtins -- called once as the helper starts, before any program
  const traceEvents = require('node:trace_events') as Record<string, unknown>
  const refused = () => {
    throw withCode(new ErrorOf('Trace events are unavailable'), 'ERR_TRACE_EVENTS_UNAVAILABLE')
  }
  defineProperty(traceEvents, 'createTracing', dataProperty(refused, true, true, true))
  defineProperty(traceEvents, 'getEnabledCategories', dataProperty(refused, true, true, true))
}

/**
 * Sends an `exit` frame as the process exits through Node (process.exit, or a crash no handler
 * took), the message a worker's exit gave. Node emits `uncaughtExceptionMonitor` before the
 * handlers, then, when none took the error, `exit` in the same turn: a crash is an error noted
 * in the turn that exits. A program can remove these listeners; the host then hears the
 * process end, which fails the run the same way with a plainer message. A program can also emit
 * the events itself and go on: the frame must not say the process ended while it runs, so the
 * process ends in the next microtask, which a real exit never reaches.
 */
function reportExit(send: (frame: HelperFrame) => void): void {
  let crash: string | undefined
  on('uncaughtExceptionMonitor', (error: unknown) => {
    crash = crashText(error)
    schedule(() => (crash = undefined))
  })
  on('exit', (code: unknown) => {
    // Node passes a number; a program emitting the event passes anything.
    const status = typeof code === 'number' ? code : 1
    const message = crash === undefined
      ? `the program ended its process (exit code ${status}) before completing`
      : `the program's process crashed: ${crash}`
    send({ type: 'exit', message })
    schedule(() => reallyExit(status))
  })
}

/** What the model reads of an error nothing handled: its message, as a worker's crash gave it. */
function crashText(thrown: unknown): string {
  let text: string
  if (isNativeError(thrown)) {
    const message = getOwnPropertyDescriptor(thrown, 'message')?.value as unknown
    text = typeof message === 'string' ? message : describeThrown(thrown)
  } else {
    text = describeThrown(thrown)
  }
  return text.length > MAX_EXIT_TEXT ? `${slice(text, 0, MAX_EXIT_TEXT)}…` : text
}
