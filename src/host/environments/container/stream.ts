/**
 * The container tier's stream: `<engine> run -i --rm` of the package's image (built by
 * `ptc-runtime-image`), whose stdin and stdout are the environment's stream and whose command
 * is the stream entry. The container sees none of the host's files and no network, runs as an
 * unprivileged user without capabilities on a read-only image whose one writable place is a
 * private /tmp, its cwd, and its memory and processes are capped by its cgroup, whose CPU
 * account is its busy time (`container-cpu.ts`). Destroying the stream deletes the container
 * (`rm -f`), and the stream closes once the engine says it is gone.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import type { Socket } from 'node:net'
import path from 'node:path'
import { Duplex } from 'node:stream'
import { type CpuAccount, containerCpuAccount } from './cpu.js'
import type { PtcSandboxProvider } from '../stream/provider.js'
import { asTeardown } from '../../../system/turns.js'

/** The stream entry inside the image (`ptc-runtime-image` puts it there). */
const ENTRY = ['/usr/local/bin/node', '/ptc/stream-entry.cjs']
/** The unprivileged user the image defines. */
const USER = '1000:1000'
/**
 * What the container holds beyond the program's budget: the entry's and the helper's own Node
 * (about 40 MiB each, measured on Node 20), and slack for the page cache of /tmp.
 */
const CONTAINER_MARGIN_MB = 384
const DIAGNOSTIC_CHARS = 2_000
/** How long deleting a container may take before the stream closes anyway. */
const REMOVE_TIMEOUT_MS = 30_000

export interface ContainerRun {
  /** `podman` or `docker` (a name on PATH or a path). */
  engine: string
  image: string
  /** The OCI runtime; absent: the engine's default. */
  runtime: string | undefined
  args: readonly string[]
  /** The container's name, unique per environment. */
  name: string
  /**
   * Where the engine runs: a private empty directory. Podman's conmon writes a file named
   * `oom` into its working directory when the container's memory limit kills something
   * (conmon before 2.1.11), which must not land in the host's.
   */
  cwd: string
  maxMemoryMb: number
  maxProcesses: number
}

/** Whether `engine` is docker (its flags differ from podman's in a few places). */
export function isDocker(engine: string): boolean {
  return path.basename(engine).startsWith('docker')
}

/**
 * The engine's arguments for one environment's container, running `command` (the stream entry).
 * /tmp is the only writable place, as the model is told: podman's `--read-only` would also
 * mount tmpfs at /run and /var/tmp unless told not to, a private IPC namespace without /dev/shm
 * (`--ipc none`) has no shared memory files, and a read-only tmpfs covers the message queues'
 * file system.
 */
export function runArguments(run: ContainerRun, command: readonly string[] = ENTRY): string[] {
  const memory = `${run.maxMemoryMb + CONTAINER_MARGIN_MB}m`
  return [
    'run', '-i', '--rm', '--name', run.name,
    ...(run.runtime ? ['--runtime', run.runtime] : []),
    '--network', 'none',
    '--read-only', ...(isDocker(run.engine) ? [] : ['--read-only-tmpfs=false']),
    '--tmpfs', `/tmp:rw,nosuid,nodev,size=${run.maxMemoryMb}m`, '--workdir', '/tmp',
    '--ipc', 'none', '--tmpfs', '/dev/mqueue:ro,nosuid,nodev,noexec,size=4k',
    '--user', USER, '--cap-drop', 'all', '--security-opt', 'no-new-privileges',
    '--memory', memory, '--memory-swap', memory, '--pids-limit', String(run.maxProcesses),
    '--log-driver', 'none',
    ...run.args,
    run.image, ...command,
  ]
}

/** The engine's arguments that delete a container at once, whatever state it is in. */
export function removeArguments(engine: string, name: string): string[] {
  // docker's `rm` has no grace period to skip; podman's waits 10 s for a running one unless told.
  return isDocker(engine) ? ['rm', '-f', name] : ['rm', '-f', '-t', '0', name]
}

/**
 * The container tier as a sandbox provider: each environment's sandbox is a container named
 * after its id. Destroying its stream deletes it (`ContainerStream._destroy`), so releasing it
 * waits for that.
 */
export function containerProvider(run: Omit<ContainerRun, 'name'>): PtcSandboxProvider {
  return {
    name: 'container',
    acquire({ id }) {
      const stream = new ContainerStream({ ...run, name: `ptc-${id}` })
      const removed = new Promise<void>((resolve) => (stream.closed ? resolve() : stream.once('close', () => resolve())))
      return {
        stream,
        release: () => {
          stream.destroy()
          return removed
        },
      }
    },
  }
}

/** One environment's container, as a byte stream. */
export class ContainerStream extends Duplex {
  private readonly _child: ChildProcess
  private _diagnostics = ''
  private _removing = false
  /** The container's CPU account, once found; undefined before, or where the host cannot see it. */
  private _account: CpuAccount | undefined
  private _busyMs = 0
  /** What the container sent while its account is looked for: held back, so that no run starts before the host can charge it. */
  private _held: Buffer[] | undefined
  /** Settles once the account was looked for (set at the first bytes). */
  private _located: Promise<void> | undefined

  constructor(private readonly _run: ContainerRun) {
    super()
    // The engine is the deployer's tool: it gets the host's environment (its storage, its socket).
    this._child = spawn(_run.engine, runArguments(_run), { cwd: _run.cwd, stdio: ['pipe', 'pipe', 'pipe'] })
    this._child.stdin!.on('error', () => undefined)
    this._child.stdout!.on('data', (chunk: Buffer) => this._received(chunk))
    this._child.stderr!.setEncoding('utf8')
    this._child.stderr!.on('data', (text: string) => (this._diagnostics = (this._diagnostics + text).slice(-DIAGNOSTIC_CHARS)))
    this._child.on('error', (error) => this.destroy(new Error(`${_run.engine} could not be started: ${error.message}`)))
    this._child.on('exit', (code) => {
      if (this._removing) return
      const detail = this._diagnostics.trim().split('\n').slice(-2).join(' ')
      // What it said last (why it ended) goes on before the stream closes.
      void Promise.resolve(this._located).then(() => {
        this.destroy(code === 0 ? undefined : new Error(`${_run.engine} run exited with code ${code}${detail ? `: ${detail}` : ''}`))
      })
    })
  }

  /**
   * The container's CPU time in ms from the host's side (every process in it, `container-cpu.ts`),
   * or undefined where the host cannot see it. Settled before the first byte reaches the host.
   */
  busyMs(): number | undefined {
    if (!this._account) return undefined
    const now = this._account()
    if (now !== undefined && Number.isFinite(now)) this._busyMs = Math.max(this._busyMs, now)
    return this._busyMs
  }

  /**
   * The container's first bytes mean it runs: its account is looked for before they go on (one
   * `inspect`), so the environment has one source of busy time from its first run on.
   */
  private _received(chunk: Buffer): void {
    if (this._held) return void this._held.push(chunk)
    if (this._located) return void this.push(chunk)
    this._held = [chunk]
    this._located = containerCpuAccount(this._run.engine, this._run.name, this._run.cwd).then((account) => {
      this._account = account
      const held = this._held!
      this._held = undefined
      if (!this.destroyed) for (const piece of held) this.push(piece)
    })
  }

  /** Whether the container keeps the host process alive: only while it serves a run. */
  ref(): void {
    this._child.ref()
    for (const pipe of this._pipes()) pipe.ref()
  }

  unref(): void {
    this._child.unref()
    for (const pipe of this._pipes()) pipe.unref()
  }

  private _pipes(): Socket[] {
    return [this._child.stdin, this._child.stdout, this._child.stderr] as Socket[]
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this._child.stdin!.write(chunk, callback)
  }

  /**
   * Deletes the container, then lets the stream close. Deleted twice: once to end it whatever
   * the client is doing, and once the client is gone, since a client killed while it was still
   * creating the container (a disposal right after the spawn) leaves one behind, and a removal
   * the client had begun itself (`--rm`) can be left half done.
   */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this._removing = true
    this._child.stdin!.destroy()
    const { exitCode, signalCode, pid } = this._child
    // A client that never started (pid undefined) emits no 'exit'.
    const exited = new Promise<void>((resolve) => (exitCode !== null || signalCode !== null || pid === undefined ? resolve() : this._child.once('exit', () => resolve())))
    // A few containers are deleted at a time (turns.ts): disposing hundreds must not start hundreds of engines at once.
    void asTeardown(async () => {
      await this._remove()
      // The client may outlive its container by a moment, or hang on a vanished one.
      this._child.kill('SIGKILL')
      await exited
      await this._remove()
      // The `inspect` that looked for the container's account as its first bytes came is a child
      // process of the host too: it must not outlive the disposal (under load it can take seconds).
      await this._located
    }).then(() => callback(error))
  }

  private _remove(): Promise<void> {
    return new Promise((resolve) => {
      execFile(this._run.engine, removeArguments(this._run.engine, this._run.name), { cwd: this._run.cwd, timeout: REMOVE_TIMEOUT_MS }, () => resolve())
    })
  }
}
