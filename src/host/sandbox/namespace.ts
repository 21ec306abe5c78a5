/**
 * The host's own sweep of a confined helper's PID namespace. The helper sweeps it too, but the
 * helper shares a process with the program: a program that took over its main thread (say
 * through `inspector`) answers that sweep however it likes. From the host, /proc shows the
 * namespace as it is, and nothing inside can hide from it.
 *
 * Under bubblewrap the tree is: bwrap (the host's child) → bwrap's reaper (PID 1 inside) → the
 * helper (PID 2 inside, bwrap's only fork) → whatever the program started. Every process of the
 * namespace descends from the reaper (orphans are reparented to it), so walking the tree from
 * there finds them all, with nothing but world-readable /proc files, and none of the host's
 * other processes need be read.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

/** Kill passes before giving up on a namespace that keeps spawning. */
const PASSES = 20
const PASS_PAUSE_MS = 5

/** Whether this kernel lists each task's children (`CONFIG_PROC_CHILDREN`): a walk then reads only the tree. */
const LISTS_CHILDREN = existsSync(`/proc/self/task/${process.pid}/children`)

/** Direct children of `pid` (of any of its threads: a worker thread's subprocess is that thread's child). */
function childrenOf(pid: number): number[] {
  if (!LISTS_CHILDREN) return wholeTable().get(pid) ?? []
  const found: number[] = []
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return found // exited
  }
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ')) if (child.trim()) found.push(Number(child))
    } catch {
      // the thread ended while we looked
    }
  }
  return found
}

/** Every process's children, from a scan of all of /proc (kernels without children lists). */
function wholeTable(): Map<number, number[]> {
  const children = new Map<number, number[]>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const ppid = parentOf(Number(name))
    if (ppid === undefined) continue
    const siblings = children.get(ppid)
    if (siblings) siblings.push(Number(name))
    else children.set(ppid, [Number(name)])
  }
  return children
}

function stat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { state: fields[0]!, ppid: Number(fields[1]) }
  } catch {
    return undefined
  }
}

const parentOf = (pid: number) => stat(pid)?.ppid

function live(pid: number): boolean {
  const state = stat(pid)?.state
  return state !== undefined && state !== 'Z' && state !== 'X'
}

/** The PIDs of `pid` in each PID namespace from the host's down (the `NSpid` line). */
function namespacePids(pid: number): number[] {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('NSpid:'))
    return line ? line.slice('NSpid:'.length).trim().split(/\s+/).map(Number) : []
  } catch {
    return []
  }
}

/** bwrap's reaper (PID 1 inside) under `bwrapPid`, if it runs. */
const reaperOf = (bwrapPid: number) => childrenOf(bwrapPid).find((pid) => namespacePids(pid).at(-1) === 1)

/** The host PID of the helper (PID 2 inside) whose bubblewrap is `bwrapPid`, if it runs. */
export function helperOf(bwrapPid: number): number | undefined {
  const reaper = reaperOf(bwrapPid)
  return reaper === undefined ? undefined : childrenOf(reaper).find((pid) => namespacePids(pid).at(-1) === 2)
}

/** Live processes of the namespace under `bwrapPid` other than its reaper and the helper. */
function strays(bwrapPid: number): number[] {
  const reaper = reaperOf(bwrapPid)
  if (reaper === undefined) return []
  const found: number[] = []
  const pending = [reaper]
  while (pending.length > 0) {
    const parent = pending.pop()!
    for (const child of childrenOf(parent)) {
      pending.push(child)
      const helper = parent === reaper && namespacePids(child).at(-1) === 2
      if (!helper && live(child)) found.push(child)
    }
  }
  return found
}

/**
 * SIGKILLs every process in the PID namespace of the helper whose bubblewrap is `bwrapPid`
 * (a host PID), except bwrap's reaper and the helper itself, in passes until none is left.
 * Resolves what it found: `found` is whether anything else was there at all, `cleared` whether
 * the namespace holds nothing else now. Linux only; a bwrap that is gone has nothing to sweep.
 */
export async function sweepHelperNamespace(bwrapPid: number): Promise<{ found: boolean; cleared: boolean }> {
  let found = false
  for (let pass = 0; pass < PASSES; pass++) {
    const targets = strays(bwrapPid)
    if (targets.length === 0) return { found, cleared: true }
    found = true
    for (const pid of targets) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    await sleep(PASS_PAUSE_MS)
  }
  return { found, cleared: strays(bwrapPid).length === 0 }
}
