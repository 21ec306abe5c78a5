/**
 * The process tier's environments (`isolation: 'process'`): one environment in a helper Node
 * process of its own, whose main thread holds the program's realm (helper-command.ts,
 * src/worker/helper-process.ts), wrapped by bubblewrap when a
 * sandbox policy confines the program. A process is the boundary a worker thread is not: the program
 * cannot reach the host's memory, descriptors, threads or secrets, and the kernel caps
 * everything it allocates (`RLIMIT_DATA`), so running out of memory ends only this process.
 *
 * One helper serves exactly one environment (one one-shot run, or one state owner's runs) and
 * dies with it. The host never relies on the helper's word about processes: it reads the
 * helper's process tree from /proc itself and kills with SIGKILL, so a program that took over
 * its helper cannot hide a subprocess or delay a deadline.
 *
 * The tier supplies its pipe (`ProcessPipe`): the helper's descriptors under bubblewrap, its
 * namespace as the host sees it (`HelperNamespace`, sandbox/namespace.ts: its reaper, sweep and
 * end), the unconfined helper's sweeps, and the watch of the namespace's processes and memory. The
 * environment around it is `PipeEnvironment` (`../pipe.ts`), as for every helper tier.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import { constants } from 'node:os'
import type { Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { CHANNEL_FD, type HelperOptions, INBOX_FD, PYTHON_SNAPSHOT_FD, SNAPSHOT_FD, WRAPPER_INPUT_FD } from '../../../protocol/frames.js'
import { helperPythonSnapshot } from '../../../python/snapshot.js'
import type { ChannelLimits } from '../../connection/frame-bounds.js'
import type { ProgramCode } from '../../../protocol/messages.js'
import type { Refusal } from '../environment.js'
import { type Pipe, type PipeEnds, PipeEnvironment } from '../pipe.js'
import { helperCpuGroup } from '../../../system/cpu-group.js'
import { limitedCommand } from '../../../system/memory-limit.js'
import { childrenOf, cpuMsOfTree, isChildOf, isDead, killProcessTrees, killTree, signalGroup } from '../../../system/process-sweep.js'
import { type HelperWrapper, PINNED_FD, openPinned } from '../../sandbox/bwrap.js'
import { unavailableMessage } from '../../sandbox/confinement.js'
import { type NamespaceBudget, NamespaceWatch } from '../../sandbox/budget.js'
import { checkHelperMounts, checkHelperRoots } from '../../sandbox/mounts.js'
import { HelperNamespace, withinProcessLimit } from '../../sandbox/namespace.js'
import { asTeardown, inTurn } from '../../../system/turns.js'
import { helperCommand } from './helper-command.js'

/** A helper that has not reported ready by then is treated as unable to start. */
const START_TIMEOUT_MS = 30_000
/** How long disposal waits for a killed helper (or bubblewrap, once its namespace's reaper was killed) to exit. */
const KILLED_EXIT_MS = 1_000
/** After the process exits, how long to wait for frames it wrote just before. */
const EXIT_DRAIN_MS = 100

export interface ProcessLaunch {
  /**
   * bubblewrap and its arguments, a PID namespace at least, made as the helper starts; absent
   * where bubblewrap is not at hand. One that cannot be made (a writable root past what
   * repositories.ts reads) throws, and only this environment's start is refused.
   */
  wrapper?: () => Pick<HelperWrapper, 'command' | 'args'> & Partial<HelperWrapper>
  /** Whether the wrapper enforces a sandbox policy (a failed start is then `sandbox-unavailable`). */
  confined: boolean
  /** The helper's working directory until its first run moves it. */
  cwd: string
  maxMemoryMb: number
  /** Writable memory a fresh helper reserves before any program runs, in KiB (`dataBaseline`). */
  baselineKb: number
  maxOldGenerationSizeMb: number
  /** The host's descriptor of the startup snapshot the helper starts from (helper-snapshot.ts), when it is ready. */
  snapshot?: number
  rehearsal?: ProgramCode
  /** The bounds the helper's frames are read within, as they arrive (frame-bounds.ts `channelLimits`). */
  channelLimits: ChannelLimits
  /** The environment's budget of processes and memory, sampled while it serves a run (with a wrapper only; its tmpfs mounts are the wrapper's). */
  budget?: Omit<NamespaceBudget, 'tmpfs'>
}

/** A helper process's environment: its pipe (`ProcessPipe`) inside the environment every helper tier shares. */
export function processEnvironment(launch: ProcessLaunch): PipeEnvironment {
  return new PipeEnvironment({
    channelLimits: launch.channelLimits,
    startTimeoutMs: START_TIMEOUT_MS,
    maxMemoryMb: launch.maxMemoryMb,
    confined: launch.confined,
    // Disposal ends the whole PID namespace, or searches the helper's tree and its marker.
    disposalSearches: true,
  }, (ends) => new ProcessPipe(launch, ends))
}

/** The helper's descriptors, and what the host does to its processes from outside. */
class ProcessPipe implements Pipe {
  private readonly _child: ChildProcess
  private readonly _channel: Socket
  /** The worker's own descriptor for host messages (INBOX_FD). */
  private readonly _inbox: Socket
  private readonly _streams: Socket[]
  /** The helper's PID namespace, when it lives in one of its own under bubblewrap. */
  private readonly _namespace: HelperNamespace | undefined
  /** Writable roots bubblewrap bound, checked from outside before each run. */
  private readonly _roots: readonly string[]
  /** What must be a mount point in the helper (roots, metadata): checked before its first run, then emptied. */
  private _mounted: readonly string[]
  /** Every subprocess of the program inherits it in its environment. */
  private readonly _marker = randomUUID()
  private _processExited = false
  /** The helper reported ready: what it started may carry the marker. */
  private _started = false
  /** What the marker finds was killed after the helper died: disposal need not look again. */
  private _sweptAfterExit = false
  /** Samples the namespace's processes and memory while a run is served (under bubblewrap). */
  private _watch: NamespaceWatch | undefined
  /** A run listens or none does: the watch samples while one does. */
  readonly listening?: (listening: boolean) => void
  /** Checks the roots before each run, when bubblewrap bound any. */
  readonly refuses?: () => Refusal | undefined

  constructor(launch: ProcessLaunch, private readonly _ends: PipeEnds) {
    const wrapper = launch.wrapper?.()
    const budget = wrapper && launch.budget && { ...launch.budget, tmpfs: wrapper.tmpfs ?? [] }
    const python = helperPythonSnapshot()
    const options: HelperOptions = {
      maxOldGenerationSizeMb: launch.maxOldGenerationSizeMb,
      rehearsal: launch.rehearsal,
      subprocessMarker: this._marker,
      ...(python ? { pythonSnapshot: python.snapshot } : {}),
    }
    const node = helperCommand(options, launch.snapshot !== undefined)
    const inner = budget ? withinProcessLimit(budget.maxProcesses, node) : node
    const command = wrapper ? [wrapper.command, ...wrapper.args, '--', ...inner] : node
    const limits = limitedCommand(launch.baselineKb, launch.maxMemoryMb, command, helperCpuGroup())
    // Its own session and process group, away from the host's terminal and signals.
    const input = wrapper?.input
    const stdio: Array<'ignore' | 'pipe' | number> = ['ignore', 'pipe', 'pipe', 'pipe', input ? 'pipe' : 'ignore', 'pipe']
    stdio[SNAPSHOT_FD] = launch.snapshot ?? 'ignore'
    stdio[PYTHON_SNAPSHOT_FD] = python ? python.descriptor : 'ignore'
    // What bubblewrap binds by descriptor, opened now: it binds them and closes them.
    const pinned = openPinned(wrapper?.pinned ?? [])
    try {
      pinned.forEach((fd, index) => (stdio[PINNED_FD + index] = fd))
      this._child = spawn('/bin/sh', limits, { cwd: launch.cwd, env: {}, detached: true, stdio })
    } finally {
      for (const fd of pinned) closeSync(fd)
    }
    if (input) (this._child.stdio[WRAPPER_INPUT_FD] as Socket).on('error', () => undefined).end(input)
    const namespace = (this._namespace = wrapper && this._child.pid !== undefined ? new HelperNamespace(this._child.pid) : undefined)
    if (namespace && budget) {
      this._watch = new NamespaceWatch(namespace.helper, budget, (message) => this._overBudget(message))
      this.listening = this._watch.watch
    }
    this._roots = wrapper?.roots ?? []
    this._mounted = [...this._roots, ...(wrapper?.pinned ?? [])]
    if (this._roots.length > 0) this.refuses = () => this._rootsTampered()
    this._channel = this._child.stdio[CHANNEL_FD] as Socket
    this._inbox = (this._child.stdio as unknown as Socket[])[INBOX_FD]!
    this._streams = [this._child.stdout as Socket, this._child.stderr as Socket, this._channel, this._inbox]
    // A write to a dead helper fails with EPIPE; unhandled, that 'error' would crash the host.
    for (const stream of this._streams) stream.on('error', () => undefined)
    // Node reports every helper that exited in one callback: a hundred ended at disposal would
    // otherwise be handled in one turn of the event loop.
    this._child.on('exit', (code, signal) => void inTurn(() => this._ended(...exitDescription(code, signal))))
    this._child.on('error', (error) => {
      if (this._child.pid === undefined) this._ended(`could not be started (${error.message})`, false)
    })
    for (const stream of [this._child.stdout!, this._child.stderr!]) {
      stream.setEncoding('utf8')
      stream.on('data', _ends.output)
    }
    // The connection reads the bytes itself, straight from the socket.
    this._channel.on('data', _ends.frames)
    // Nothing genuine comes back on the inbox: bytes there were written by the program.
    this._inbox.on('data', _ends.forged)
  }

  ready(): void {
    this._started = true
    this._namespace?.helper() // the reaper must be known to wait for it at the end
    this._watch?.measureBaseline()
  }

  pause(): void {
    this._channel.pause()
    this._inbox.pause()
  }

  kill(): void {
    this._child.kill('SIGKILL')
  }

  write(frame: string, to: 'channel' | 'inbox', written?: () => void): void {
    if (to === 'channel') this._channel.write(`${frame}\n`)
    // Written once the kernel took it: a worker that stops reading leaves it pending.
    else this._inbox.write(`${frame}\n`, written)
  }

  /**
   * The worker writes its reports itself, so the first since the last tidy is checked here: it
   * must name a child of the helper (PID 2 in its namespace), or one already gone. The pid is
   * never killed by number: a report only makes the next tidy sweep, from outside. Later reports
   * are not read from /proc, or a flood of them would stall the host.
   */
  adopt(pid: number): boolean {
    return this._namespace ? this._namespace.adopts(pid) : isChildOf(pid, this._child.pid) !== false
  }

  /**
   * Kills, from outside, what the program left: under bubblewrap everything in the helper's PID
   * namespace; otherwise the helper's children and, when `marked`, every process with the marker.
   */
  async sweep(marked: boolean): Promise<boolean> {
    if (this._namespace) return this._namespace.sweep()
    const strays = await inTurn(() => this._strays())
    if (strays.length === 0 && !marked) return true
    await killProcessTrees(new Set(strays), marked ? this._marker : undefined)
    return inTurn(() => this._strays().every((pid) => isDead(pid)))
  }

  audit(): Promise<boolean> {
    return this.sweep(false)
  }

  /**
   * A helper that died without a namespace (the program had a subprocess kill it, say) leaves
   * what it started running, out of its tree: those carrying its marker are found and killed.
   * A namespace dies with its helper.
   */
  async abandon(): Promise<void> {
    if (!this._processExited || this._namespace || !this._started || this._sweptAfterExit) return
    await killProcessTrees(new Set(), this._marker)
    this._sweptAfterExit = true
  }

  busyMs(): number {
    return this._child.pid === undefined ? 0 : cpuMsOfTree(this._child.pid)
  }

  readonly hold = (held: boolean): void => {
    const method = held ? 'ref' : 'unref'
    this._child[method]()
    for (const stream of this._streams) stream[method]()
  }

  /**
   * Ends the helper and everything the program started, with SIGKILL, and resolves once the
   * helper has exited. Nothing waits for the helper's cooperation: it may be stuck in a native
   * call or in the program's hands.
   */
  async close(): Promise<void> {
    if (!this._processExited && this._child.pid !== undefined) {
      this.hold(true) // an idle (unref'd) helper would let the host exit before 'exit' arrives
      // A namespace ends through its reaper; failing that, the helper's tree is searched.
      if (!this._namespace) await this._endUnconfined()
      else if (!(await this._namespace.close(this._ends.whenReady, this._ends.whenExited, KILLED_EXIT_MS))) await killProcessTrees(new Set([this._child.pid]), this._marker)
    } else {
      await this.abandon()
    }
    await this._ends.whenExited
  }

  /**
   * Runtime disposal's first step, for every environment serving a run, in the same tick. Its
   * namespace's reaper is killed, which takes every process of the namespace with it; the reaper
   * is found among bubblewrap's children (bubblewrap, the host's own unreaped child, has not
   * reaped it), so its PID names no other process. Without a namespace, the helper's process
   * group is stopped, so that its programs stop spinning until `close()` kills its tree. A read
   * and a signal each: spinning programs stop taking the CPU the host needs to end them. An
   * idle helper takes no CPU and is left to `close()`, which kills helpers a few at a time where
   * that spares the host (turns.ts): hundreds dying at once would crowd it out.
   */
  end(): void {
    const bwrap = this._child.pid
    if (this._processExited || bwrap === undefined) return
    if (!this._namespace) return signalGroup(bwrap, 'SIGSTOP')
    this._namespace.kill() // no tree formed yet, or gone: close() looks as ever
  }

  /**
   * Without a namespace, the helper's process group is stopped first, so that a spinning program
   * takes no CPU while it waits for its turn; in its turn (a few helpers at a time, turns.ts) its
   * whole tree and the groups it leads are killed from their children lists (`killTree`), and
   * only then is the machine searched for what left the tree carrying the marker, sharing the
   * looks with every other sweep (process-table.ts). The kill waits for no look: on a busy
   * machine one took seconds (3-4.7 s at 4 000 processes and load 50), and every helper waited
   * for two or three before its SIGKILL, past the pool's drain.
   */
  private async _endUnconfined(): Promise<void> {
    const pid = this._child.pid!
    // Node reaps the helper and sets its exit in one step: until then its PID is still its own.
    const signalled = (send: () => void) =>
      inTurn(() => {
        if (this._child.exitCode === null && this._child.signalCode === null) send()
      })
    await signalled(() => signalGroup(pid, 'SIGSTOP'))
    await asTeardown(async () => {
      await signalled(() => killTree(pid))
      await Promise.race([this._ends.whenExited, sleep(KILLED_EXIT_MS, undefined, { ref: false })])
    })
    await killProcessTrees(new Set(), this._marker)
  }

  /** A root replaced by a symlink while bubblewrap was mounting it would redirect writes. */
  private _rootsTampered(): Refusal | undefined {
    const helper = this._namespace?.helper()
    // Where each mount landed, before the first run's program (once: mounts never change).
    const mounts = this._mounted.length > 0 ? checkHelperMounts(helper, this._mounted) : undefined
    if (mounts === undefined) this._mounted = []
    const problem = mounts ?? checkHelperRoots(helper, this._roots)
    return problem === undefined ? undefined : { kind: 'sandbox-unavailable', message: unavailableMessage(problem) }
  }

  /** The program's processes still in the helper's tree (an unconfined helper is one process). */
  private _strays(): number[] {
    return childrenOf(this._child.pid!).filter((pid) => !isDead(pid))
  }

  /**
   * The environment holds more than its budget: everything in its PID namespace is killed
   * (bubblewrap's reaper first, which takes the namespace down with it), and the run fails with
   * `message` as the helper's exit.
   */
  private _overBudget(message: string): void {
    this._ends.overBudget(message)
    this._namespace?.kill()
    this._child.kill('SIGKILL')
  }

  private _ended(describe: string, died: boolean): void {
    if (this._processExited) return
    this._processExited = true
    this._watch?.watch(false)
    this._ends.ended(describe, died, this._drained())
  }

  /** Frames written just before the exit may still be unread: the pipes get a moment to end, and the namespace to empty. */
  private async _drained(): Promise<void> {
    const closed = this._streams.map((stream) => new Promise<void>((resolve) => {
      if (stream.destroyed || stream.readableEnded) resolve()
      else stream.once('close', () => resolve())
    }))
    let drain: NodeJS.Timeout | undefined
    await Promise.race([Promise.all(closed), new Promise<void>((resolve) => (drain = setTimeout(resolve, EXIT_DRAIN_MS)))])
    clearTimeout(drain)
    // The run settles once the namespace's reaper is gone: nothing of the namespace runs then.
    await this._namespace?.gone(KILLED_EXIT_MS)
    for (const stream of this._streams) stream.destroy()
  }
}

/**
 * How the helper's process ended, and whether it was killed: by a signal, or (bwrap passes on
 * what ended the helper inside it) with the status 128 plus a signal's number.
 */
function exitDescription(code: number | null, signal: NodeJS.Signals | null): [string, boolean] {
  if (signal) return [`was killed by ${signal}`, true]
  const name = code !== null && code > 128 ? Object.entries(constants.signals).find(([, number]) => number === code - 128)?.[0] : undefined
  return name ? [`was killed by ${name} (exit code ${code})`, true] : [`exited with code ${code}`, false]
}
