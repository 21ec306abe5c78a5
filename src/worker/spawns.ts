/**
 * Every subprocess a program starts, by whatever path (child_process's asynchronous and
 * synchronous functions, `new ChildProcess().spawn(...)`, a library), reaches the system through
 * one of two bindings: process_wrap's `Process#spawn` and spawn_sync's `spawn`. Both are wrapped
 * here, below everything a program can call, so that each subprocess
 *
 * - carries the environment's marker in its environment, which its descendants inherit: the host
 *   finds by it what left both the process tree and the process group (`setsid`, a double fork,
 *   `cmd &` in a synchronous shell, `nohup`, `disown`) and kills it when the run settles;
 * - gets no environment but the one it was given (a spawn without one would inherit the
 *   process's own, which on the thread host is the host's, secrets and all);
 * - is reported to the host, even after it has exited (a synchronous spawn's child is gone by
 *   the time the call returns, but what it left running must still be searched for).
 *
 * The options are copied once before the binding reads them, so getters or a Proxy cannot show
 * the wrapper one environment and the binding another.
 */
import { SUBPROCESS_MARKER_VARIABLE } from '../protocol/messages.js'
import { StringOf, apply, assign, create, dataProperty, defineProperty, isArray, realmProcess, uncurryThis } from './intrinsics.js'

type Options = Record<string, unknown>

const hasOwn = Object.hasOwn
const startsWith = uncurryThis(String.prototype.startsWith)
const MARKER_PREFIX = `${SUBPROCESS_MARKER_VARIABLE}=`

/** Appends without `[[Set]]`: a setter a program planted on Array.prototype never runs. */
function append(list: unknown[], value: unknown): void {
  defineProperty(list, list.length, dataProperty(value, true, true, true))
}

/** A snapshot of `options` whose environment is exactly the given one plus the marker. */
function marked(options: unknown, marker: string): unknown {
  if (typeof options !== 'object' || options === null) return options // the binding refuses it
  const copy = assign(create(null), options) as Options
  copy.envPairs = markedPairs(copy.envPairs, marker)
  return copy
}

/** A fresh list of the given `NAME=value` pairs, without any marker of theirs, plus ours. */
function markedPairs(given: unknown, marker: string): string[] {
  const pairs: string[] = []
  if (isArray(given)) {
    for (let index = 0; index < given.length; index++) {
      const pair = StringOf(given[index])
      if (!startsWith(pair, MARKER_PREFIX)) append(pairs, pair)
    }
  }
  append(pairs, MARKER_PREFIX + marker)
  return pairs
}

/**
 * Where `Process#spawn` takes the environment. Up to Node 22 it takes one options object; from
 * Node 24 positional arguments (file, args, cwd, envPairs, stdio, flags, uid, gid). Node's own
 * caller decides, so the shape of each call does: an object first is the options, anything else
 * the positional form. A call in the shape this Node does not take fails in the binding before
 * anything starts, so no shape reaches a spawn without the marker.
 */
const POSITIONAL_ENV_PAIRS = 3

type Spawn = (options: unknown) => unknown
const binding = uncurryThis((process as unknown as { binding(name: string): unknown }).binding)

/** Wraps both spawn bindings; called before process.binding is refused (thread-host.ts). */
export function markSpawns(marker: string, onSpawn: (pid: number) => void): void {
  const processPrototype = (binding(realmProcess, 'process_wrap') as { Process: { prototype: { spawn: Spawn } } }).Process.prototype
  const asyncSpawn = processPrototype.spawn
  defineProperty(processPrototype, 'spawn', dataProperty(function spawn(this: { pid?: unknown }, ...args: unknown[]): unknown {
    const first = args[0]
    if (typeof first === 'object' && first !== null) defineProperty(args, 0, dataProperty(marked(first, marker), true, true, true))
    else defineProperty(args, POSITIONAL_ENV_PAIRS, dataProperty(markedPairs(args[POSITIONAL_ENV_PAIRS], marker), true, true, true))
    const error = apply(asyncSpawn, this, args)
    const pid = this.pid
    if (error === 0 && typeof pid === 'number' && pid > 0) onSpawn(pid)
    return error
  }, false, true, true))
  const spawnSync = binding(realmProcess, 'spawn_sync') as { spawn: Spawn }
  const syncSpawn = spawnSync.spawn
  defineProperty(spawnSync, 'spawn', dataProperty(function spawn(options: unknown): unknown {
    const result = apply(syncSpawn, spawnSync, [marked(options, marker)]) as Options
    const pid = typeof result === 'object' && result !== null && hasOwn(result, 'pid') ? result.pid : undefined
    if (typeof pid === 'number' && pid > 0) onSpawn(pid)
    return result
  }, false, true, true))
}
