/**
 * Environments: where programs run. An environment is one fresh Worker running our
 * bootstrap. It serves one run at a time (several in sequence when state is retained) and is
 * never handed to another owner. Disposal terminates the worker, kills the subprocess groups
 * its programs started, and resolves once the worker has exited.
 *
 * `ThreadEnvironment` hosts the worker in this process; other hosts (a confined helper
 * process) implement the same `Environment` interface.
 */
import { readFileSync } from 'node:fs'
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads'
import type { HostMessage } from '../protocol.js'
import type { ImageAttachmentRef } from '../seam/types.js'

const WORKER_FILE = new URL('./worker.js', import.meta.url)

/** Receives what an environment reports while it serves a run. */
export interface EnvironmentListener {
  message(raw: unknown): void
  /** Traffic on the worker's parentPort, which the runtime never uses: forged by the program. */
  forged(): void
  /** Writes that bypassed the patched streams and reached the worker's real stdout/stderr. */
  rawOutput(text: string): void
  exit(code: number, error: Error | undefined): void
}

export interface EnvironmentOptions {
  maxOldGenerationSizeMb: number
}

export interface Environment {
  /** Resolves once the worker (and whatever hosts it) has exited. */
  readonly exited: Promise<void>
  /** Attachments issued to programs in this environment; only these may be emitted as images. */
  readonly issuedImages: Map<string, ImageAttachmentRef>
  /** Top-level names earlier runs left (scoped-repl carries them forward). */
  readonly carried: Set<string>
  /** Runs started here; the initializer runs with the first. */
  runs: number
  readonly alive: boolean
  attach(listener: EnvironmentListener | undefined): void
  send(message: HostMessage): void
  /** Records a subprocess group a program reported, if it really is one of ours. */
  adoptSubprocess(pid: number): boolean
  killSubprocesses(): void
  /** Idle environments must not keep the host process alive. */
  hold(held: boolean): void
  /** Terminates the worker and everything it started; resolves after exit. */
  dispose(): Promise<void>
}

/** A process-group leader that is a direct child of this process, i.e. one a worker spawned. */
function isOwnChildGroup(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[1]) === process.pid && Number(fields[2]) === pid
  } catch {
    return false
  }
}

/** An environment whose worker is a thread of this process. */
export class ThreadEnvironment implements Environment {
  readonly exited: Promise<void>
  readonly issuedImages = new Map<string, ImageAttachmentRef>()
  readonly carried = new Set<string>()
  runs = 0
  private readonly _worker: Worker
  private readonly _port: MessagePort
  private readonly _groups = new Set<number>()
  private _listener: EnvironmentListener | undefined
  private _exitCode: number | undefined
  private _error: Error | undefined

  constructor(options: EnvironmentOptions) {
    const { port1, port2 } = new MessageChannel()
    this._port = port1
    this._worker = new Worker(WORKER_FILE, {
      workerData: { port: port2 },
      transferList: [port2],
      env: {},
      execArgv: ['--no-warnings'],
      resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb },
      stdout: true,
      stderr: true,
    })
    // Attached at spawn: `exit` can fire in the same tick as the worker's last message.
    this.exited = new Promise((resolve) => {
      this._worker.on('exit', (code) => {
        this._exitCode = code
        this._port.close()
        this._listener?.exit(code, this._error)
        resolve()
      })
    })
    this._worker.on('error', (error) => {
      this._error = error
    })
    this._worker.on('message', () => this._listener?.forged())
    this._worker.on('messageerror', () => this._listener?.forged())
    this._port.on('message', (message) => this._listener?.message(message))
    this._port.on('messageerror', () => this._listener?.forged())
    for (const stream of [this._worker.stdout, this._worker.stderr]) {
      stream.setEncoding('utf8')
      stream.on('data', (text: string) => this._listener?.rawOutput(text))
    }
  }

  get alive(): boolean {
    return this._exitCode === undefined
  }

  attach(listener: EnvironmentListener | undefined): void {
    this._listener = listener
    if (listener && !this.alive) listener.exit(this._exitCode!, this._error)
  }

  send(message: HostMessage): void {
    if (this.alive) this._port.postMessage(message)
  }

  adoptSubprocess(pid: number): boolean {
    if (!isOwnChildGroup(pid)) return false
    this._groups.add(pid)
    return true
  }

  killSubprocesses(): void {
    for (const pgid of this._groups) {
      try {
        process.kill(-pgid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    this._groups.clear()
  }

  hold(held: boolean): void {
    if (held) {
      this._worker.ref()
      this._port.ref()
    } else {
      this._worker.unref()
      this._port.unref()
    }
  }

  async dispose(): Promise<void> {
    this._listener = undefined
    this.killSubprocesses()
    await this._worker.terminate()
    await this.exited
    this.killSubprocesses()
  }
}
