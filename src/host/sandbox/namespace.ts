/**
 * The host's own sweep of a confined helper's PID namespace. The helper sweeps it too, but the
 * helper shares a process with the program: a program that took over its main thread (say
 * through `inspector`) answers that sweep however it likes. From the host, /proc shows the
 * namespace as it is, and nothing inside can hide from it.
 *
 * Under bubblewrap the tree is: bwrap (the host's child) → bwrap's reaper (PID 1 inside) → the
 * helper (PID 2 inside, bwrap's only fork) → whatever the program started. Every process of the
 * namespace descends from the reaper (orphans are reparented to it), so walking the tree from
 * there finds them all, with nothing but world-readable /proc files.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

/** Kill passes before giving up on a namespace that keeps spawning. */
const PASSES = 20
const PASS_PAUSE_MS = 5

interface Entry {
  ppid: number
  state: string
}

function table(): Map<number, Entry> {
  const entries = new Map<number, Entry>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      entries.set(Number(name), { state: fields[0]!, ppid: Number(fields[1]) })
    } catch {
      // exited while we looked
    }
  }
  return entries
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

const live = (entry: Entry | undefined) => entry !== undefined && entry.state !== 'Z' && entry.state !== 'X'

/** Live processes of the namespace under `bwrapPid` other than its reaper and the helper. */
function strays(bwrapPid: number): number[] {
  const processes = table()
  const children = new Map<number, number[]>()
  for (const [pid, entry] of processes) {
    const siblings = children.get(entry.ppid)
    if (siblings) siblings.push(pid)
    else children.set(entry.ppid, [pid])
  }
  const reaper = (children.get(bwrapPid) ?? []).find((pid) => namespacePids(pid).at(-1) === 1)
  if (reaper === undefined) return []
  const found: number[] = []
  const pending = [reaper]
  while (pending.length > 0) {
    for (const child of children.get(pending.pop()!) ?? []) {
      pending.push(child)
      const helper = processes.get(child)!.ppid === reaper && namespacePids(child).at(-1) === 2
      if (!helper && live(processes.get(child))) found.push(child)
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
