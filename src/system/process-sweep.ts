/**
 * Killing what programs started. A worker thread's subprocesses are children of this very
 * process and survive `worker.terminate()`, so the host records each one the worker reports
 * (after checking it really is a direct child) and kills its whole tree at settlement: its
 * process group when it leads one, and every descendant. Processes that left both the tree and
 * the group are found by the environment marker every subprocess inherits (a program can still
 * clear its children's environment; only confinement is sure). Both searches need a look at
 * every process of the machine, taken asynchronously and shared by every sweep waiting for one
 * (`process-table.ts`); only reads of the few processes already known happen synchronously. A
 * tree whose root can still be stopped (a helper at its end) is killed from its own children
 * lists instead (`killTree`), at once: a look may take seconds on a busy machine.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { HOST_STARTED, type ProcessStat, type ProcessTable, parseStat, processTable } from './process-table.js'
import { inTurn } from './turns.js'

/** `/proc/<pid>/stat`, read through the /proc mounted at `proc` (a PID namespace's own, say). */
function readStat(pid: number | string, proc = '/proc'): ProcessStat | undefined {
  try {
    return parseStat(readFileSync(`${proc}/${pid}/stat`, 'utf8'))
  } catch {
    return undefined
  }
}

/**
 * Whether `pid` is a direct child of `parent` (this process by default), both as the /proc at
 * `proc` numbers them; `undefined` when it has already exited (there is nothing left to kill,
 * and nothing to accuse the program of).
 */
export function isChildOf(pid: number, parent = process.pid, proc = '/proc'): boolean | undefined {
  const stat = readStat(pid, proc)
  return stat === undefined ? undefined : stat.ppid === parent
}

/** Every descendant of `roots` in `table`. */
function descendantsOf(roots: ReadonlySet<number>, table: ProcessTable): number[] {
  if (roots.size === 0) return []
  const children = new Map<number, number[]>()
  for (const [pid, stat] of table.stats) {
    const list = children.get(stat.ppid)
    if (list) list.push(pid)
    else children.set(stat.ppid, [pid])
  }
  const found: number[] = []
  const pending = [...roots]
  while (pending.length > 0) {
    for (const child of children.get(pending.pop()!) ?? []) {
      found.push(child)
      pending.push(child)
    }
  }
  return found
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

/** Sends `name` to the process group `pid` leads and to `pid` itself, whichever still exist. */
export function signalGroup(pid: number, name: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, name)
    } catch {
      // gone
    }
  }
}

const ended = (stat: ProcessStat | undefined) => stat === undefined || stat.state === 'Z' || stat.state === 'X'

/**
 * Whether `pid` is gone or a zombie: nothing of it runs any more. A process whose main thread
 * exited shows as a zombie while its other threads run on, so a zombie's threads are read too.
 * `proc` is the /proc to read (a PID namespace's own, where `pid` is that namespace's number).
 */
export function isDead(pid: number, proc = '/proc'): boolean {
  if (!ended(readStat(pid, proc))) return false
  let threads: string[]
  try {
    threads = readdirSync(`${proc}/${pid}/task`)
  } catch {
    return true // gone
  }
  return threads.every((thread) => ended(readStat(`${pid}/task/${thread}`, proc)))
}

/** The PIDs the /proc at `proc` lists, zombies included; `undefined` when it cannot be read. */
export function listedPids(proc: string): number[] | undefined {
  try {
    return readdirSync(proc).filter((entry) => /^\d+$/.test(entry)).map(Number)
  } catch {
    return undefined
  }
}

/**
 * Whether nothing but `spared` can run among the processes of the /proc at `proc` (a PID
 * namespace's own): the verdict of a sweep that no race can fool. One listing cannot give it. A
 * chain of processes that each fork the next and exit has one hop listed, a zombie by the time it
 * is read, and the successor it forked after the listing missing from it (seen: 1 verdict in 30
 * against a compiled chain). So every other process must be over (a zombie with every thread
 * ended) when read, and two listings after those reads must hold no one else: a hop forks its
 * successor before it dies, so a listing made after that death shows the successor or one of its
 * own, unless the PIDs wrapped around while it was made, which two listings in a row cannot both
 * meet. Processes are told apart by their start time too, so a PID taken again counts as new.
 */
export function nothingElseRuns(proc: string, spared: readonly number[]): boolean {
  const others = () => (listedPids(proc) ?? []).filter((pid) => !spared.includes(pid))
  const over = new Map<number, string | undefined>()
  for (const pid of others()) {
    if (!isDead(pid, proc)) return false
    over.set(pid, readStat(pid, proc)?.started)
  }
  const known = (pid: number) => {
    if (!over.has(pid)) return false
    const started = readStat(pid, proc)?.started
    return started === undefined || started === over.get(pid)
  }
  return others().every(known) && others().every(known)
}

const CHILDREN_LISTED = process.platform === 'linux' && existsSync(`/proc/self/task/${process.pid}/children`)

/**
 * The direct children of `pid` (of all its threads). The kernel lists them per thread in
 * /proc/<pid>/task/<tid>/children, a few small reads instead of a walk of all of /proc; where
 * the kernel lacks that file, the walk answers instead.
 */
export function childrenOf(pid: number): number[] {
  if (!CHILDREN_LISTED) return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && readStat(entry)?.ppid === pid).map(Number)
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return [] // gone
  }
  const children: number[] = []
  for (const task of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ')) if (child.trim()) children.push(Number(child))
    } catch {
      // the thread ended meanwhile
    }
  }
  return children
}

/**
 * SIGKILLs `root`, every process under it and every process group one of them leads, in one
 * synchronous step that reads only the tree's own children lists (`childrenOf`), never the rest
 * of the machine. Each process is stopped before its children are read: it can start no other
 * meanwhile, and a child of it that exits stays its zombie, keeping its PID, so the list names the
 * whole tree and, signalled in the same step, no stranger. What had left the tree before
 * (reparented away) is not here: only a look at the machine finds it (`killProcessTrees` with a
 * marker).
 */
export function killTree(root: number): void {
  const tree = [root]
  const found = new Set(tree)
  for (let index = 0; index < tree.length; index++) {
    const pid = tree[index]!
    try {
      process.kill(pid, 'SIGSTOP')
    } catch {
      // gone, or not ours to stop: its children are read all the same
    }
    for (const child of childrenOf(pid)) {
      if (found.has(child)) continue
      found.add(child)
      tree.push(child)
    }
  }
  // Deepest first: each is signalled while its parent, stopped and alive, still holds its PID.
  for (const pid of tree.reverse()) {
    if (readStat(pid)?.pgrp === pid) signal(-pid)
    signal(pid)
  }
}

/** How long a sweep keeps looking for what it must kill, once it has looked twice. */
const SWEEP_MS = 1000
const POLL_MS = 5

/** Clock ticks per second in /proc's times: USER_HZ, 100 on every architecture Linux runs Node on. */
const USER_HZ = 100

/**
 * CPU time, in milliseconds, of `root` and every process under it: each one's own user and
 * system time plus what its reaped children used. 0 off Linux.
 */
export function cpuMsOfTree(root: number): number {
  if (process.platform !== 'linux') return 0
  let ticks = 0
  const pending = [root]
  for (let count = 0; pending.length > 0 && count < 4096; count++) {
    const pid = pending.pop()!
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // utime, stime, cutime, cstime: fields 14-17 of stat(5), 12-15 after the name.
      for (let index = 11; index <= 14; index++) ticks += Number(fields[index]) || 0
    } catch {
      continue // gone meanwhile
    }
    pending.push(...childrenOf(pid))
  }
  return (ticks * 1000) / USER_HZ
}

/**
 * SIGKILLs each recorded child, its process group when it leads one, all descendants and, with
 * a `marker`, every process carrying it; then looks again until nothing is found alive (briefly,
 * bounded), so a settled run leaves nothing running. One look is not enough: a process that was
 * forking or exec'ing while /proc was read shows itself or its child only to a later look.
 */
export async function killProcessTrees(pids: ReadonlySet<number>, marker?: string): Promise<void> {
  if (process.platform !== 'linux' || (pids.size === 0 && marker === undefined)) return
  // Every synchronous step (a few small reads and signals) waits for its turn of the host's
  // event loop, shared with every other sweep (turns.ts).
  await inTurn(() => {
    for (const pid of pids) {
      const stat = readStat(pid)
      if (stat?.pgrp === pid) signal(-pid)
    }
  })
  const deadline = Date.now() + SWEEP_MS
  // Look again only once the last targets are dead, and stop after two looks in a row find
  // nothing alive. One is not proof: a process in the middle of exec shows an empty
  // environment, so its marker is missed for that moment.
  let emptyLooks = 0
  let previous: ProcessTable | undefined
  for (let looks = 0; emptyLooks < 2 && (looks < 2 || Date.now() < deadline); looks++) {
    // After a look that found nothing alive, nothing was killed since: any later look will do.
    const table = (previous = await processTable(marker === undefined ? undefined : HOST_STARTED, emptyLooks > 0 ? previous : undefined))
    const targets = await inTurn(() => {
      const candidates = new Set([...pids, ...descendantsOf(pids, table), ...(marker === undefined ? [] : (table.marked.get(marker) ?? []))])
      const alive = [...candidates].filter((pid) => !isDead(pid))
      for (const pid of alive) signal(pid)
      return alive
    })
    emptyLooks = targets.length === 0 ? emptyLooks + 1 : 0
    await until(() => targets.every((pid) => isDead(pid)), deadline)
  }
  // The recorded pids are this process's own children, spawned by a worker thread, and only that
  // worker's event loop will ever reap them: wait until they are reaped, not merely dead, or a
  // worker terminated right after this would leave them as zombies of the host for good.
  await until(() => [...pids].every((pid) => readStat(pid)?.ppid !== process.pid), deadline)
}

/** Polls `done` every few milliseconds until it holds or `deadline` (a `Date.now()`) passes. */
async function until(done: () => boolean, deadline: number): Promise<void> {
  while (!(await inTurn(done)) && Date.now() < deadline) await sleep(POLL_MS)
}
