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
import { ErrorOf, NumberOf, apply, dataProperty, defineProperty, isArray, realmProcess, withCode } from './intrinsics.js'
import { markSpawns } from './spawns.js'
import { closeHostReach, isHostThread } from './shared-process-guard.js'

const ONE_PATH = [
  'access', 'appendFile', 'chmod', 'chown', 'lchmod', 'lchown', 'lstat', 'lutimes', 'mkdir', 'mkdtemp',
  'open', 'opendir', 'readdir', 'readFile', 'readlink', 'realpath', 'rm', 'rmdir', 'stat', 'statfs',
  'truncate', 'unlink', 'utimes', 'writeFile', 'exists',
]
const STREAMS_AND_WATCHERS = ['createReadStream', 'createWriteStream', 'watch', 'watchFile', 'unwatchFile', 'openAsBlob']
const TWO_PATHS = ['copyFile', 'cp', 'link', 'rename']

// Everything the patched functions use while a program runs is captured here, before any program
// could replace it (a program shares this realm and may patch globals, prototypes and modules).
// What belongs to the process (its PIDs, its cwd) is read by installProcessWorld instead: a
// helper restored from a startup snapshot (snapshot.ts) is not the process its modules loaded in.
let processPid: number
let processPpid: number
const resolvePath = path.resolve
const isAbsolutePath = path.isAbsolute
const statSync = fs.statSync
const { S_IFMT, S_IFDIR } = fs.constants

let cwd: string
const resolveAgainstCwd = (value: unknown) =>
  typeof value === 'string' && value !== '' && !isAbsolutePath(value) ? resolvePath(cwd, value) : value

type AnyFunction = (...args: unknown[]) => unknown

function wrapPaths(target: Record<string, unknown>, name: string, positions: readonly number[]): void {
  const original = target[name]
  if (typeof original !== 'function') return
  const wrapped = function (this: unknown, ...args: unknown[]) {
    for (let at = 0; at < positions.length; at++) {
      const index = positions[at]!
      if (index < args.length) args[index] = resolveAgainstCwd(args[index])
    }
    return apply(original as AnyFunction, this, args)
  }
  // eslint-disable-next-line no-restricted-syntax, hostile-realm/captured-builtins -- runs once at worker start, before any program
  for (const key of Object.keys(original)) (wrapped as unknown as Record<string, unknown>)[key] = (original as unknown as Record<string, unknown>)[key]
  if (name === 'realpath' || name === 'realpathSync') {
    const native = (original as unknown as { native?: AnyFunction }).native
    if (native) {
      ;(wrapped as unknown as { native: AnyFunction }).native = (...args) => {
        args[0] = resolveAgainstCwd(args[0])
        return apply(native, undefined, args)
      }
    }
  }
  target[name] = wrapped
}

/* eslint-disable no-restricted-syntax -- runs once at worker start, before any program */

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

/* eslint-enable no-restricted-syntax */

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
  for (let at = args.length; at > index; at--) args[at] = args[at - 1]
  args[index] = fresh
  return fresh
}

function patchChildProcess(): void {
  const target = childProcess as unknown as Record<string, AnyFunction>
  const patch = (name: string, afterArgsArray: boolean, detach: boolean) => {
    const original = target[name]!
    target[name] = function (this: unknown, ...args: unknown[]) {
      const options = optionsOf(args, afterArgsArray)
      options.cwd = resolvePath(cwd, typeof options.cwd === 'string' ? options.cwd : '.')
      // A process group of its own lets the host kill the whole tree when the run settles
      // (exec and execFile ignore the option; the host walks their descendants instead).
      if (detach) options.detached = true
      return apply(original, this, args)
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

/**
 * Refuses signals to the process hosting the worker, its parent, every process group (0 and
 * negative pids) and, when the worker shares the host's process, every thread of it (a signal
 * sent to a thread id reaches the whole process). Signal 0 only probes and stays allowed. The
 * pid is converted to a number once, and that number is what Node receives. Everything it
 * compares with and calls was captured at module load.
 */
function guardSignals(sharesHostProcess: boolean): void {
  const remedy = sharesHostProcess ? "; run such programs with isolation: 'process'" : ''
  const refuse = (pid: number) => {
    const error = withCode(new ErrorOf(`kill ${pid}: programs may not signal the runtime's process, its threads or process groups${remedy}`), 'EPERM')
    defineProperty(error, 'syscall', dataProperty('kill', false, true, true))
    return error
  }
  const guard = (name: 'kill' | '_kill') => {
    const original = (realmProcess as unknown as Record<string, AnyFunction>)[name]
    if (typeof original !== 'function') return
    const guarded = function (pid: unknown, signal?: unknown) {
      const number = NumberOf(pid)
      const probe = signal === 0 || signal === '0'
      const host = number <= 0 || number === processPid || number === processPpid || (sharesHostProcess && isHostThread(number))
      if (!probe && host) throw refuse(number)
      return apply(original, realmProcess, [number, signal])
    }
    defineProperty(realmProcess, name, dataProperty(guarded, false, true, true))
  }
  guard('kill')
  guard('_kill')
}

/**
 * A nested worker starts with Node's own `process` and `child_process`, outside every guard
 * here: it could signal the host process, its subprocesses are never reported, and its heap is
 * not capped. Sharing the host's process, programs may therefore not start one.
 */
function refuseNestedWorkers(): void {
  // Required here, not imported: a startup snapshot must not hold `worker_threads` (snapshot.ts).
  // eslint-disable-next-line hostile-realm/captured-builtins -- runs once at worker start, before any program
  const workerThreads = require('node:worker_threads') as typeof import('node:worker_threads')
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
  processPid = realmProcess.pid
  processPpid = realmProcess.ppid
  // eslint-disable-next-line hostile-realm/captured-builtins -- runs once as the environment starts, before any program
  cwd = realmProcess.cwd()
  patchFs()
  patchChildProcess()
  markSpawns(options.subprocessMarker, onSpawn)
  guardSignals(options.sharesHostProcess)
  if (options.sharesHostProcess) {
    refuseNestedWorkers()
    closeHostReach()
  }
  realmProcess.cwd = () => cwd
  realmProcess.chdir = (directory: string) => {
    const next = resolvePath(cwd, directory)
    if ((statSync(next).mode & S_IFMT) !== S_IFDIR) throw new ErrorOf(`ENOTDIR: not a directory, chdir '${directory}'`)
    cwd = next
  }
  syncBuiltinESMExports()
}

/** Sets the working directory a run starts in. */
export function setWorkingDirectory(directory: string): void {
  cwd = directory
}
