/**
 * A confined helper's PID namespace as the host sees it from outside: the cap on its processes
 * it starts with, its reaper and helper (`HelperNamespace`), how it is ended, the host's own
 * sweep of it, and what it holds (`namespaceMembers`, `heldBytes`: the budget's sample, budget.ts,
 * reads both here in one step). The helper sweeps it too, but it shares a process with the program: a program
 * that took over its main thread (say through `inspector`) answers that sweep however it likes.
 * From the host, /proc shows the namespace as it is, and nothing inside can hide from it.
 *
 * Under bubblewrap the tree is: bwrap (the host's child) → bwrap's reaper (PID 1 inside) → the
 * helper (PID 2 inside, bwrap's only fork) → whatever the program started. Every process of the
 * namespace descends from the reaper (orphans are reparented to it), so walking the tree from
 * there finds them all, with nothing but world-readable /proc files, and none of the host's
 * other processes need be read.
 *
 * Walking that tree reads a file per thread of every process in it, about 0.2 ms for a Node
 * helper, on every settlement. The namespace's own /proc (bubblewrap mounts a fresh one) lists
 * its processes in one directory read, so a sweep first asks that (three reads, process-sweep.ts):
 * when it lists nothing running but the reaper and the helper (zombies waiting to be reaped run
 * nothing), there is nothing to walk. The program cannot edit that listing: it has no capability
 * to mount, unmount or change its root, and it cannot make a new namespace.
 */
import { readFileSync, statfsSync } from 'node:fs'
import { release } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { childrenOf, isChildOf, isDead, listedPids, nothingElseRuns } from '../../system/process-sweep.js'
import { asTeardown, inTurn } from '../../system/turns.js'

/** The helper's PID inside its namespace: bwrap's reaper is 1 and starts only the helper. */
export const NAMESPACE_HELPER_PID = 2

const PAGE_BYTES = 4096

/** Kill passes before giving up on a namespace that keeps spawning. */
const PASSES = 20
const PASS_PAUSE_MS = 5
/** How often the end of a namespace's reaper is looked for once bwrap has exited. */
const REAPER_POLL_MS = 2
/** How long disposal lets a starting helper finish forming its process tree before killing it. */
const READY_GRACE_MS = 2_000

/**
 * Runs first inside bubblewrap's namespaces, then becomes the helper (keeping PID 2): caps the
 * processes and threads of this user namespace, that is of this environment alone, at `$1`
 * (RLIMIT_NPROC, which the kernel counts per user namespace; a host running as root is exempt
 * from it, and the host's sampling is what holds there).
 */
const NAMESPACE_LIMITS_SCRIPT = 'ulimit -p "$1" 2>/dev/null; shift; exec "$@"'

/**
 * Whether the kernel counts RLIMIT_NPROC per user namespace (Linux 5.14 and later). Before, it
 * counted every process of the user on the machine, and the limit would fail a busy host's helpers.
 */
const NPROC_PER_NAMESPACE = (() => {
  const [major = 0, minor = 0] = release().split('.').map((part) => Number.parseInt(part, 10))
  return major > 5 || (major === 5 && minor >= 14)
})()

/**
 * `command`, to run inside bubblewrap, with the processes and threads of its user namespace
 * capped at `maxProcesses` where the kernel counts them per namespace (unchanged elsewhere).
 */
export function withinProcessLimit(maxProcesses: number, command: readonly string[]): string[] {
  return NPROC_PER_NAMESPACE ? ['/bin/sh', '-c', NAMESPACE_LIMITS_SCRIPT, 'ptc-limits', String(maxProcesses), ...command] : [...command]
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

/** The host PID of the helper under bwrap's reaper `reaperPid`, if it runs. */
const helperUnder = (reaperPid: number) => childrenOf(reaperPid).find((pid) => namespacePids(pid).at(-1) === NAMESPACE_HELPER_PID)

/** The host PIDs of the reaper and the helper under `bwrapPid`, once both run. */
function namespaceOf(bwrapPid: number): { reaper: number; helper: number } | undefined {
  const reaper = reaperOf(bwrapPid)
  const helper = reaper === undefined ? undefined : helperUnder(reaper)
  return helper === undefined ? undefined : { reaper: reaper!, helper }
}

/** The host PID of the helper whose bubblewrap is `bwrapPid`, if it runs. */
export const helperOf = (bwrapPid: number): number | undefined => namespaceOf(bwrapPid)?.helper

/**
 * Ends the PID namespace under `bwrapPid` without looking for its processes: SIGKILL to its
 * reaper (PID 1 inside) makes the kernel kill every other process of the namespace, and the
 * reaper's exit completes only once they are all gone. bwrap, its parent, then reaps it and
 * exits, so once bwrap has exited and the reaper is gone, nothing of the namespace runs. Returns
 * the reaper's host PID, or `undefined` when there is none to kill (bwrap has not formed its
 * tree yet, or is gone).
 */
export function killNamespace(bwrapPid: number, knownReaper?: number): number | undefined {
  // A reaper found before is checked with one read (is it still bwrap's child, so its PID names
  // no other process?) instead of being looked for again: disposal ends a hundred at once.
  const reaper = knownReaper !== undefined && isChildOf(knownReaper, bwrapPid) ? knownReaper : reaperOf(bwrapPid)
  if (reaper === undefined) return undefined
  try {
    process.kill(reaper, 'SIGKILL')
  } catch {
    // gone meanwhile
  }
  return reaper
}

/**
 * One helper's PID namespace under bubblewrap, as the host finds and ends it from outside: its
 * reaper and helper, found once (they live as long as the environment), and whether the reaper
 * already has its SIGKILL.
 */
export class HelperNamespace {
  private _reaper: number | undefined
  private _helper: number | undefined
  private _killed = false

  constructor(private readonly _bwrapPid: number) {}

  /** The host PID of the helper inside, once it runs. Bound: a watch asks it as it samples. */
  readonly helper = (): number | undefined => {
    const found = this._helper === undefined ? namespaceOf(this._bwrapPid) : undefined
    if (found) ({ reaper: this._reaper, helper: this._helper } = found)
    return this._helper
  }

  /** Whether `pid` is a child of the helper (PID 2 inside), or already gone: one read of the namespace's /proc. */
  adopts(pid: number): boolean {
    const helper = this.helper()
    return helper === undefined || isChildOf(pid, NAMESPACE_HELPER_PID, `/proc/${helper}/root/proc`) !== false
  }

  /** Kills everything in the namespace but the reaper and the helper (`sweepHelperNamespace`); resolves whether it is clear. */
  async sweep(): Promise<boolean> {
    return (await sweepHelperNamespace(this._bwrapPid, await inTurn(() => this.helper()))).cleared
  }

  /** SIGKILL to the reaper now, which takes the namespace down with it (`killNamespace`); false while there is none. */
  kill(): boolean {
    if (this._killed) return true
    const reaper = killNamespace(this._bwrapPid, this._reaper)
    if (reaper === undefined) return false
    this._reaper ??= reaper
    return (this._killed = true)
  }

  /**
   * Ends the namespace at disposal through its reaper, which the kernel lets exit only once
   * everything else in it is gone: no process of the machine need be read. Until `ready`,
   * bubblewrap may still be forming its tree; killing it half-formed can orphan the reaper for
   * good (measured: 5 of 15 helpers disposed right after spawn), so it gets a grace first. Then
   * a few namespaces end at a time (turns.ts). Resolves false when there was no reaper to kill
   * (bubblewrap's tree not formed, or already gone), and the caller falls back to looking for
   * the processes. Once the reaper has its SIGKILL, nothing of the namespace can
   * outlive it, however long the dying takes: a search then would only take the CPU the dying
   * need (measured: 300 helpers dying at once on a loaded machine took over the wait below, and
   * the searches that followed, reading every process of the machine, added 0.4 s to disposal).
   * So it waits for `exited` only up to `timeoutMs`: where helpers die a few at a time, a slow
   * one frees its turn.
   */
  async close(ready: Promise<unknown>, exited: Promise<void>, timeoutMs: number): Promise<boolean> {
    if (!this._killed) await Promise.race([ready, exited, sleep(READY_GRACE_MS, undefined, { ref: false })])
    return asTeardown(async () => {
      if (!(await inTurn(() => this.kill()))) return false
      await Promise.race([exited, sleep(timeoutMs, undefined, { ref: false })])
      return true
    })
  }

  /**
   * Resolves once the reaper is gone, or after `timeoutMs`. bwrap exits with its helper's status
   * as soon as the helper dies, but the reaper (PID 1 inside) waits for every other process
   * there, and is killed only as bwrap's child dies (--die-with-parent): what the program
   * started may run a moment longer. Each look waits for a turn (turns.ts).
   */
  async gone(timeoutMs: number): Promise<void> {
    const reaper = this._reaper
    if (reaper === undefined) return
    const deadline = Date.now() + timeoutMs
    // Ref'd: once bwrap has exited and its pipes closed, this poll may be all that keeps an
    // awaited disposal alive (unref'd, the host exited with 13, unsettled top-level await).
    while (!(await inTurn(() => isDead(reaper))) && Date.now() < deadline) await sleep(REAPER_POLL_MS)
  }
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
      const helper = parent === reaper && namespacePids(child).at(-1) === NAMESPACE_HELPER_PID
      if (!helper && !isDead(child)) found.push(child)
    }
  }
  return found
}

/**
 * The PIDs (inside) of every process in the PID namespace of the helper whose host PID is
 * `helperPid`, as the namespace's own /proc lists them (zombies included); `undefined` when
 * that cannot be read (the helper is gone).
 */
export function namespaceMembers(helperPid: number): number[] | undefined {
  return listedPids(`/proc/${helperPid}/root/proc`)
}

/** Bytes the namespace of the helper whose host PID is `helper` holds: its members' memory and its tmpfs contents. */
export function heldBytes(helper: number, members: readonly number[], tmpfs: readonly string[]): number {
  const proc = `/proc/${helper}/root/proc`
  let bytes = 0
  for (const pid of members) {
    try {
      const [, resident, shared] = readFileSync(`${proc}/${pid}/statm`, 'utf8').split(' ').map(Number)
      bytes += Math.max(resident! - shared!, 0) * PAGE_BYTES
    } catch {
      // exited meanwhile
    }
  }
  for (const place of tmpfs) {
    try {
      const stats = statfsSync(`/proc/${helper}/root${place}`)
      bytes += (stats.blocks - stats.bfree) * stats.bsize
    } catch {
      // not mounted in this helper
    }
  }
  return bytes
}

/**
 * SIGKILLs every process in the PID namespace of the helper whose bubblewrap is `bwrapPid`
 * (a host PID), except bwrap's reaper and the helper itself, in passes until none is left.
 * Resolves what it found: `found` is whether anything else was there at all, `cleared` whether
 * the namespace holds nothing else now. Linux only; a bwrap that is gone has nothing to sweep.
 * `helperPid`, when the caller knows it, lets a namespace holding nothing else answer at once,
 * and has the namespace's own /proc confirm that a sweep left nothing running.
 */
export async function sweepHelperNamespace(bwrapPid: number, helperPid?: number): Promise<{ found: boolean; cleared: boolean }> {
  const settled = () => helperPid === undefined || nothingElseRuns(`/proc/${helperPid}/root/proc`, [1, NAMESPACE_HELPER_PID])
  // Nothing running by the namespace's own listings: no tree to walk. Each pass's reads and
  // signals wait for a turn of the host's event loop, shared with every other sweep (turns.ts).
  if (helperPid !== undefined && (await inTurn(settled))) return { found: false, cleared: true }
  let found = false
  for (let pass = 0; pass < PASSES; pass++) {
    const cleared = await inTurn(() => {
      const targets = strays(bwrapPid)
      if (targets.length === 0 && settled()) return true
      for (const pid of targets) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
      return false
    })
    if (cleared) return { found, cleared: true }
    found = true
    await sleep(PASS_PAUSE_MS)
  }
  return { found, cleared: await inTurn(() => strays(bwrapPid).length === 0 && settled()) }
}
