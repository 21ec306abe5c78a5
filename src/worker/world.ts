/**
 * The program's view of the process it shares with the host: a working directory of its own,
 * subprocesses the host can kill when the run settles, and no way to signal the host.
 *
 * A worker thread cannot `chdir` (the OS cwd belongs to the whole process), so the run's cwd
 * is emulated: `process.cwd()` returns it and relative paths given to `fs`, `fs/promises` and
 * `child_process` are resolved against it before Node sees them. This covers the APIs programs
 * use; native consumers of the OS cwd (sqlite, unix sockets) are not covered. Runs under a
 * sandbox policy get a real process-level cwd from their helper process instead.
 *
 * Subprocesses are marked and reported below child_process, at the spawn bindings (spawns.ts);
 * a worker that shares the host's process also gets the refusals of thread-host.ts.
 */
import childProcess from 'node:child_process'
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import path from 'node:path'
import workerThreads from 'node:worker_threads'
import { ErrorOf, NumberOf, call, dataProperty, defineProperty, isArray } from './intrinsics.js'
import { markSpawns } from './spawns.js'
import { closeHostReach, isHostThread } from './thread-host.js'

const ONE_PATH = [
  'access', 'appendFile', 'chmod', 'chown', 'lchmod', 'lchown', 'lstat', 'lutimes', 'mkdir', 'mkdtemp',
  'open', 'opendir', 'readdir', 'readFile', 'readlink', 'realpath', 'rm', 'rmdir', 'stat', 'statfs',
  'truncate', 'unlink', 'utimes', 'writeFile', 'exists',
]
const STREAMS_AND_WATCHERS = ['createReadStream', 'createWriteStream', 'watch', 'watchFile', 'unwatchFile', 'openAsBlob']
const TWO_PATHS = ['copyFile', 'cp', 'link', 'rename']

let cwd = process.cwd()
const resolveAgainstCwd = (value: unknown) =>
  typeof value === 'string' && value !== '' && !path.isAbsolute(value) ? path.resolve(cwd, value) : value

type AnyFunction = (...args: unknown[]) => unknown

function wrapPaths(target: Record<string, unknown>, name: string, positions: readonly number[]): void {
  const original = target[name]
  if (typeof original !== 'function') return
  const wrapped = function (this: unknown, ...args: unknown[]) {
    for (const index of positions) if (index < args.length) args[index] = resolveAgainstCwd(args[index])
    return (original as AnyFunction).apply(this, args)
  }
  for (const key of Object.keys(original)) (wrapped as unknown as Record<string, unknown>)[key] = (original as unknown as Record<string, unknown>)[key]
  if (name === 'realpath' || name === 'realpathSync') {
    const native = (original as unknown as { native?: AnyFunction }).native
    if (native) (wrapped as unknown as { native: AnyFunction }).native = (...args) => native(resolveAgainstCwd(args[0]), ...args.slice(1))
  }
  target[name] = wrapped
}

function patchFs(): void {
  const modules: Array<[Record<string, unknown>, boolean]> = [
    [fs as unknown as Record<string, unknown>, true],
    [fs.promises as unknown as Record<string, unknown>, false],
  ]
  for (const [target, withSync] of modules) {
    const names = [...ONE_PATH, ...(withSync ? STREAMS_AND_WATCHERS : [])]
    for (const name of names) {
      wrapPaths(target, name, [0])
      if (withSync) wrapPaths(target, `${name}Sync`, [0])
    }
    for (const name of TWO_PATHS) {
      wrapPaths(target, name, [0, 1])
      if (withSync) wrapPaths(target, `${name}Sync`, [0, 1])
    }
    // symlink(target, path): the target stays relative to the link, only the link path moves.
    wrapPaths(target, 'symlink', [1])
    if (withSync) wrapPaths(target, 'symlinkSync', [1])
  }
}

/** Where the options object of a child_process call sits, inserting one when it is absent. */
function optionsOf(args: unknown[], afterArgsArray: boolean): Record<string, unknown> {
  let index = 1
  if (afterArgsArray && isArray(args[1])) index = 2
  const current = args[index]
  if (typeof current === 'object' && current !== null && !isArray(current)) {
    const copy = { ...(current as Record<string, unknown>) }
    args[index] = copy
    return copy
  }
  const fresh: Record<string, unknown> = {}
  args.splice(index, 0, fresh)
  return fresh
}

function patchChildProcess(): void {
  const target = childProcess as unknown as Record<string, AnyFunction>
  const patch = (name: string, afterArgsArray: boolean, detach: boolean) => {
    const original = target[name]!
    target[name] = function (this: unknown, ...args: unknown[]) {
      const options = optionsOf(args, afterArgsArray)
      options.cwd = path.resolve(cwd, typeof options.cwd === 'string' ? options.cwd : '.')
      // A process group of its own lets the host kill the whole tree when the run settles
      // (exec and execFile ignore the option; the host walks their descendants instead).
      if (detach) options.detached = true
      return original.apply(this, args)
    }
  }
  patch('spawn', true, true)
  patch('fork', true, true)
  patch('execFile', true, true)
  patch('exec', false, true)
  patch('spawnSync', true, false)
  patch('execFileSync', true, false)
  patch('execSync', false, false)
}

// Captured before any program runs, which may redefine process.pid and process.ppid.
const hostPid = process.pid
const hostParent = process.ppid

/**
 * Refuses signals to the process hosting the worker, its parent, every process group (0 and
 * negative pids) and, when the worker shares the host's process, every thread of it (a signal
 * sent to a thread id reaches the whole process). Signal 0 only probes and stays allowed. The
 * pid is converted to a number once, and that number is what Node receives.
 */
function guardSignals(sharesHostProcess: boolean): void {
  const remedy = sharesHostProcess ? "; run such programs with isolation: 'process'" : ''
  const refuse = (pid: number) => {
    const error = new ErrorOf(`kill ${pid}: programs may not signal the runtime's process, its threads or process groups${remedy}`)
    defineProperty(error, 'code', dataProperty('EPERM', false, true, true))
    defineProperty(error, 'syscall', dataProperty('kill', false, true, true))
    return error
  }
  for (const name of ['kill', '_kill'] as const) {
    const original = (process as unknown as Record<string, AnyFunction>)[name]
    if (typeof original !== 'function') continue
    const guarded = function (pid: unknown, signal?: unknown) {
      const number = NumberOf(pid)
      const probe = signal === 0 || signal === '0'
      const host = number <= 0 || number === hostPid || number === hostParent || (sharesHostProcess && isHostThread(number))
      if (!probe && host) throw refuse(number)
      return call(original, process, number, signal)
    }
    defineProperty(process, name, dataProperty(guarded, false, true, true))
  }
}

/**
 * A nested worker starts with Node's own `process` and `child_process`, outside every guard
 * here: it could signal the host process, its subprocesses are never reported, and its heap is
 * not capped. Sharing the host's process, programs may therefore not start one.
 */
function refuseNestedWorkers(): void {
  const Worker = function Worker() {
    throw new ErrorOf(
      'new Worker(): programs here may not start worker threads (they would run outside the runtime\'s guards); run work concurrently with async functions and Promise.all instead',
    )
  }
  ;(workerThreads as unknown as Record<string, unknown>).Worker = Worker
}

export interface WorldOptions {
  /**
   * The worker shares the host's process (not a helper's): nested workers, the inspector, native
   * code, raw bindings and signals to the host's threads are refused.
   */
  sharesHostProcess: boolean
  /** The value of SUBPROCESS_MARKER_VARIABLE in every subprocess's environment. */
  subprocessMarker: string
}

/**
 * Installs cwd emulation, subprocess marking and reporting, the signal guard and, sharing the
 * host's process, the refusals. Called once per worker, before any program runs.
 */
export function installProcessWorld(onSpawn: (pid: number) => void, options: WorldOptions): void {
  patchFs()
  patchChildProcess()
  markSpawns(options.subprocessMarker, onSpawn)
  guardSignals(options.sharesHostProcess)
  if (options.sharesHostProcess) {
    refuseNestedWorkers()
    closeHostReach()
  }
  process.cwd = () => cwd
  process.chdir = (directory: string) => {
    const next = path.resolve(cwd, directory)
    if (!fs.statSync(next).isDirectory()) throw new ErrorOf(`ENOTDIR: not a directory, chdir '${directory}'`)
    cwd = next
  }
  syncBuiltinESMExports()
}

/** Sets the working directory a run starts in. */
export function setWorkingDirectory(directory: string): void {
  cwd = directory
}
