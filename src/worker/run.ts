/**
 * One run inside the worker: install the run's globals, evaluate the initializer and the
 * program, and send exactly one terminal message (`done` or `failed`).
 */
import vm from 'node:vm'
import { jsonByteLength, jsonStringByteLength, snapshotJson } from '../json/index.js'
import type { PtcJsonValue } from '../seam/types.js'
import { type FailedMessage, type ProgramCode, type RepliesMessage, type ReplyMessage, type RunMessage, type WorkerFailureKind, KEY_BOUNDS, KEY_BOUNDS_RULE } from '../protocol/messages.js'
import { createProgramHooks, type ProgramState } from '../transform/hooks.js'
import { BindingBridge } from './bindings.js'
import { Draws } from './draws.js'
import { blockThread, endThread, uncurryThis } from './intrinsics.js'
import type { Outbox } from './outbox.js'
import { OutputChannel } from './output.js'
import { runPython } from './python.js'
import { describeThrown, registerProgram } from './stack.js'
import { flushProcessStreams } from './streams.js'

/** How long a finished one-shot worker in a helper waits for the host to kill the helper. */
const HELPER_KILL_WAIT_MS = 2000

const importModuleDynamically = vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER
// A program may replace `vm.Script` or its methods (it can import node:vm): capture both now.
const Script = vm.Script
const runInThisContext = uncurryThis(vm.Script.prototype.runInThisContext)

export class WorkerRun {
  readonly output: OutputChannel
  private readonly _bridge: BindingBridge
  /** A durable run's clocks and randomness, recorded (and first replayed). */
  private readonly _draws: Draws | undefined
  private _settled = false

  /**
   * @param _sharesHostProcess whether the worker shares the host's process (WorkerData); if not, it
   * lives in a helper process, whose whole process the host kills right after a one-shot result.
   */
  constructor(
    private readonly _post: Outbox,
    private readonly _message: RunMessage,
    private readonly _sharesHostProcess: boolean,
  ) {
    const { run, maxOutputBytes, maxPendingCallBytes } = _message
    this.output = new OutputChannel(_post, run, maxOutputBytes, () =>
      this.fail('output-limit', `output exceeded ${maxOutputBytes} bytes`),
    )
    const draws = _message.durable ? new Draws(_message.durable, run) : undefined
    this._draws = draws
    // The values drawn so far reach the host before the calls that follow them (a held call among them).
    const post: Outbox = draws
      ? (outgoing) => {
          const report = draws.take()
          if (report) _post(report)
          _post(outgoing)
        }
      : _post
    this._bridge = new BindingBridge(post, run, maxPendingCallBytes)
  }

  receive(message: ReplyMessage | RepliesMessage): void {
    this._bridge.receive(message)
  }

  spawned(pid: number): void {
    if (!this._settled) this._post({ type: 'spawned', run: this._message.run, pid })
  }

  /** Evaluates the initializer (if any) and the program; settles the run. */
  async execute(state: ProgramState): Promise<void> {
    const message = this._message
    if (!this._bridge.install(message.namespaces)) {
      return this.fail(
        'exception',
        "this environment can no longer take the run's tool bindings (an earlier program froze or sealed the global object, or fixed a binding's name); the next run starts in a fresh environment",
        { unusable: true },
      )
    }
    this._draws?.install()
    // From here on the run's code may have run: the host must not run the program again.
    this._post({ type: 'started', run: message.run })
    if (message.initializer) {
      try {
        await this._evaluate(message.initializer, 'initializer', state)
      } catch (thrown) {
        return this.fail('exception', `the environment initializer failed: ${describeThrown(thrown)}`, { initializer: true })
      }
    }
    let completion: unknown
    try {
      completion = await this._evaluate(message.program, 'program', state)
    } catch (thrown) {
      return this.fail('exception', describeThrown(thrown))
    }
    this._complete(completion)
  }

  fail(kind: WorkerFailureKind, text: string, flags: { initializer?: true; unusable?: true } = {}): void {
    if (this._settled) return
    // A partial character a stream still holds is the run's last output; emitting it may
    // itself end the run (output-limit).
    flushProcessStreams()
    if (this._settled) return
    this._settled = true
    this._bridge.close()
    this.output.close()
    const { run, maxOutputBytes } = this._message
    // A message longer than output may hold ends as output-limit at the host whatever it says (its
    // ledger), and the host's reader refuses a failure's message past maxOutputBytes: say so here.
    if (jsonStringByteLength(text) > maxOutputBytes) {
      kind = 'output-limit'
      text = `output exceeded ${maxOutputBytes} bytes`
    }
    // Literals define their fields, so setters a program planted on Object.prototype never run.
    const message: FailedMessage = { type: 'failed', run, kind, message: text }
    if (flags.initializer) message.initializer = true
    if (flags.unusable) message.unusable = true
    this._post(message)
    this._endIfLast()
  }

  private async _evaluate(program: ProgramCode, label: 'program' | 'initializer', state: ProgramState): Promise<unknown> {
    if (program.python) {
      const unusable = (text: string) => this.fail('exception', text, { unusable: true })
      return await runPython({ ...program, python: program.python }, label, this._message.namespaces, this.output, unusable)
    }
    const filename = registerProgram(program, label, this._message.run)
    const entry = runInThisContext(new Script(program.code, { filename, importModuleDynamically }))
    return await entry(createProgramHooks(state))
  }

  private _complete(completion: unknown): void {
    if (this._settled) return
    flushProcessStreams() // before the completion is measured against what output left free
    if (this._settled) return
    if (completion === undefined || this._message.discardCompletion) return this._done(undefined)
    const snapshot = snapshotJson(completion, KEY_BOUNDS)
    if (!snapshot.ok && snapshot.tooManyKeys === true) {
      return this.fail('invalid-output', `the completion value holds ${snapshot.reason}, and ${KEY_BOUNDS_RULE}; return fewer keys (a list of entries rather than an object keyed by id) or fewer values (a summary)`)
    }
    if (!snapshot.ok) {
      return this.fail('invalid-output', `the completion value is not lossless JSON: ${snapshot.reason}`)
    }
    if (jsonByteLength(snapshot.value) > this.output.free) {
      return this.fail('output-limit', `output exceeded ${this._message.maxOutputBytes} bytes`)
    }
    this._done(snapshot.value)
  }

  private _done(value: PtcJsonValue | undefined): void {
    this._settled = true
    this._bridge.close()
    this.output.close()
    const run = this._message.run
    this._post(value === undefined ? { type: 'done', run } : { type: 'done', run, value })
    this._endIfLast()
  }

  /** A one-shot run's environment is finished: stop here, even inside the program's own call. */
  private _endIfLast(): void {
    if (!this._message.oneShot) return
    // In a helper, wait for that kill first: a worker ending while a program's inspector session
    // is connected to the helper's main thread makes Node abort the helper, sometimes before the
    // result is out. The thread still ends if no kill comes (the program closed the channel, so
    // the result never left): the host then hears the worker exit.
    if (!this._sharesHostProcess) blockThread(HELPER_KILL_WAIT_MS)
    endThread()
  }
}
