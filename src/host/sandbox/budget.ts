/**
 * One environment's budget, checked from outside: every process in the helper's PID namespace
 * (the helper, its worker, every subprocess and their threads' memory) and its private tmpfs
 * mounts together. The kernel caps each process (`RLIMIT_DATA`) and each tmpfs (`--size`), but
 * not their sum: four subprocesses, each under the cap, or a full `/tmp` beside a full
 * `/dev/shm`, would hold several budgets at once. Without a cgroup of its own (which needs
 * privileges or a delegated hierarchy), the host samples the sum itself.
 *
 * A sample reads the namespace's own /proc, which lists every member in one directory read (a
 * program cannot hide from it: it has no capability to change mounts), then one `statm` per
 * member and one `statfs` per tmpfs (measured: with 120 processes in the namespace, sampling
 * delayed the host's event loop by 18 ms at most over 3 s). Memory is counted as each
 * process's resident memory not backed by files (`resident - shared` in `statm`), since the
 * Node binary and libraries are shared by all of them, plus what each writable tmpfs holds.
 *
 * A sample is up to SAMPLE_MS behind the program: the watch bounds what an environment keeps,
 * it does not make an allocation fail.
 */
import { heldBytes, namespaceMembers } from './namespace.js'

/** How often an environment serving a run is sampled. */
export const SAMPLE_MS = 50
const MIB = 2 ** 20

export interface NamespaceBudget {
  /** Processes the namespace may hold at once (its reaper and the helper included). */
  maxProcesses: number
  /** Memory the program may add to what a fresh environment holds, in MiB (`maxMemoryMb`). */
  maxMemoryMb: number
  /** Writable private tmpfs mounts, as paths inside the sandbox. */
  tmpfs: readonly string[]
}

/**
 * Samples one environment while it serves a run, and calls `over` once, with the failure
 * message for the model, when it holds more processes or memory than its budget allows. The
 * memory baseline is what the environment held when it became ready.
 */
export class NamespaceWatch {
  private _timer: NodeJS.Timeout | undefined
  /** The helper's host PID, once found: it lives as long as the environment. */
  private _pid: number | undefined
  private _baselineBytes: number | undefined
  private _fired = false

  constructor(
    private readonly _helper: () => number | undefined,
    private readonly _budget: NamespaceBudget,
    private readonly _over: (message: string) => void,
  ) {}

  /** Records what a fresh environment holds; call once it is ready, before any program runs. */
  measureBaseline(): void {
    const helper = (this._pid ??= this._helper())
    const members = helper === undefined ? undefined : namespaceMembers(helper)
    if (members !== undefined) this._baselineBytes = heldBytes(helper!, members, this._budget.tmpfs)
  }

  /** Starts sampling (a run is being served), or stops it (none is); bound, so a pipe can hand it on as its `listening`. */
  readonly watch = (on: boolean): void => {
    if (!on || this._fired) {
      clearInterval(this._timer)
      this._timer = undefined
      return
    }
    if (this._timer) return
    this._timer = setInterval(() => this._sample(), SAMPLE_MS)
    this._timer.unref()
  }

  private _sample(): void {
    const helper = (this._pid ??= this._helper())
    if (this._fired || helper === undefined) return
    const members = namespaceMembers(helper)
    if (members === undefined) return
    const { maxProcesses, maxMemoryMb, tmpfs } = this._budget
    let message: string | undefined
    // Counted before anything is read per member: a fork bomb makes that list long.
    if (members.length > maxProcesses) {
      message = `the program started more than ${maxProcesses} processes at once (maxProcesses), so its environment was stopped`
    } else if (this._baselineBytes !== undefined) {
      const held = (heldBytes(helper, members, tmpfs) - this._baselineBytes) / MIB
      if (held > maxMemoryMb) {
        message = `the program exceeded its memory budget of ${maxMemoryMb} MiB (maxMemoryMb): it and its subprocesses held `
          + `${Math.round(held)} MiB of memory and temporary files together, so its environment was stopped`
      }
    }
    if (message === undefined) return
    this._fired = true
    this.watch(false)
    this._over(message)
  }
}
