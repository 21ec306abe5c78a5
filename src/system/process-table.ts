/**
 * One look at every process of the machine, for the sweeps that must find what a program started
 * wherever it went (its tree, or anywhere by the environment marker). Reading /proc costs a file
 * or two per process, so on a busy machine a walk is thousands of reads: it is done with
 * asynchronous reads, a bounded number at a time, so the host's event loop only ever handles one
 * small file between other work, and it is shared: every sweep waiting for a look gets the same
 * one. Many environments settling at once (a runtime disposed with a hundred runs in flight) cost
 * one walk per round, not one per environment every few milliseconds.
 *
 * A sweep must see the machine as it is after its own kills, so a look never answers a request
 * made after it started: such a request waits for the next one. A sweep that killed nothing since
 * its last look needs only a later one, and may take the look that started as that one ended.
 *
 * Markers are read only from processes that started after the host did: a program's subprocess
 * cannot be older than the host that ran the program (exec keeps a process's start time, so this
 * holds whatever it became), and on most machines most processes are, which halves such a walk.
 */
import { close, open, read, readFileSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { SUBPROCESS_MARKER_VARIABLE } from '../protocol/messages.js'

export interface ProcessStat {
  state: string
  ppid: number
  pgrp: number
  /** A kernel thread (PF_KTHREAD): it has no environment to carry a marker. */
  kernel: boolean
  /** When it started, in clock ticks after boot: a PID taken again later names a process that started later. */
  started: string
}

export interface ProcessTable {
  /** Every process but this one, by host PID. */
  readonly stats: ReadonlyMap<number, ProcessStat>
  /** The processes carrying each marker value, when markers were asked for. */
  readonly marked: ReadonlyMap<string, readonly number[]>
}

/** Reads in flight at once: enough to keep the threadpool busy, few enough not to crowd out the host's own file work. */
const READS_IN_FLIGHT = 16
const READ_BYTES = 64 * 1024
const MARKER_ENTRY = `${SUBPROCESS_MARKER_VARIABLE}=`
/** The `flags` bit of a kernel thread (include/linux/sched.h); a third of this VM's processes. */
const PF_KTHREAD = 0x00200000

/** The `/proc/<pid>/stat` fields a sweep needs, parsed (the command name may hold spaces and parentheses). */
export function parseStat(text: string): ProcessStat {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { state: fields[0]!, ppid: Number(fields[1]), pgrp: Number(fields[2]), kernel: (Number(fields[6]) & PF_KTHREAD) !== 0, started: fields[19]! }
}

/** When this process started, in the ticks of `ProcessStat.started`; 0 (every process) where /proc cannot tell. */
export const HOST_STARTED: number = (() => {
  try {
    return Number(parseStat(readFileSync('/proc/self/stat', 'utf8')).started) || 0
  } catch {
    return 0
  }
})()

/** Every marker value in a NUL-separated environment block. */
function markersIn(environ: string, found: (marker: string) => void): void {
  for (let at = environ.indexOf(MARKER_ENTRY); at !== -1; at = environ.indexOf(MARKER_ENTRY, at + 1)) {
    if (at > 0 && environ[at - 1] !== '\0') continue // the text inside another variable's value
    const end = environ.indexOf('\0', at)
    found(environ.slice(at + MARKER_ENTRY.length, end === -1 ? undefined : end))
  }
}

/**
 * The text of a /proc file, read through `buffer` with one open, read and close each on the
 * threadpool (`readFile` takes more steps, and a walk was measured about ten times slower with
 * it); `undefined` when the process is gone or the file is not ours to read. A read that fills
 * the buffer may have more behind it (/proc files answer with as much as asked until their end).
 */
function readProcFile(path: string, buffer: Buffer, encoding: 'utf8' | 'latin1'): Promise<string | undefined> {
  return new Promise((resolve) => {
    open(path, 'r', (error, fd) => {
      if (error) return resolve(undefined)
      let text = ''
      const more = () =>
        read(fd, buffer, 0, buffer.length, null, (failure, bytes) => {
          if (!failure) text += buffer.toString(encoding, 0, bytes)
          if (!failure && bytes === buffer.length) return more()
          close(fd, () => undefined)
          resolve(failure ? undefined : text)
        })
      more()
    })
  })
}

/** A walk of /proc; with `markersSince`, it reads the markers of processes started at or after that tick. */
async function walk(markersSince: number | undefined): Promise<ProcessTable> {
  const stats = new Map<number, ProcessStat>()
  const marked = new Map<string, number[]>()
  let entries: string[]
  try {
    entries = await readdir('/proc')
  } catch {
    return { stats, marked }
  }
  const pids = entries.filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => pid !== process.pid)
  let next = 0
  const reader = async () => {
    const buffer = Buffer.allocUnsafe(READ_BYTES)
    while (next < pids.length) {
      const pid = pids[next++]!
      // Gone meanwhile, or another user's environment: nothing to note.
      const stat = await readProcFile(`/proc/${pid}/stat`, buffer, 'utf8')
      if (stat === undefined) continue
      const parsed = parseStat(stat)
      stats.set(pid, parsed)
      if (markersSince === undefined || parsed.kernel || Number(parsed.started) < markersSince) continue
      const environ = await readProcFile(`/proc/${pid}/environ`, buffer, 'latin1')
      markersIn(environ ?? '', (marker) => {
        const list = marked.get(marker)
        if (list) list.push(pid)
        else marked.set(marker, [pid])
      })
    }
  }
  await Promise.all(Array.from({ length: READS_IN_FLIGHT }, reader))
  return { stats, marked }
}

interface Look {
  /** Markers are read from processes started at or after this tick; undefined: none are read. */
  markersSince: number | undefined
  table: Promise<ProcessTable>
  /** The look scheduled after this one, which starts as this one ends. */
  next?: Look
}

/** The look not started yet, which every request joins until it starts. */
let waiting: Look | undefined
/** The last look started or scheduled; the next starts after it. */
let last: Look | undefined
/** The look each table came from, for a request `after` it. */
const looks = new WeakMap<ProcessTable, Look>()

/**
 * A look at every process of the machine that starts after this call, shared with every other
 * request made before it starts; with `markersSince`, it also reads for subprocess markers the
 * environment of each process started at or after that tick (`HOST_STARTED` for a sweep: see
 * above). With `after`, a table the caller had and acted on without killing anything, the look
 * that started as that one ended will do as well, if it reads what is asked: staggered sweeps
 * (environments ending a few at a time) otherwise each waited for one look more. Never rejects
 * (an unreadable /proc is an empty table).
 */
export function processTable(markersSince: number | undefined, after?: ProcessTable): Promise<ProcessTable> {
  const next = after === undefined ? undefined : looks.get(after)?.next
  if (next !== undefined && next !== waiting && reads(next, markersSince)) return next.table
  if (waiting) {
    waiting.markersSince = earliest(waiting.markersSince, markersSince)
    return waiting.table
  }
  const look: Look = { markersSince, table: undefined as unknown as Promise<ProcessTable> }
  const previous = last?.table ?? Promise.resolve()
  look.table = previous.then(async () => {
    if (waiting === look) waiting = undefined
    const table = await walk(look.markersSince)
    looks.set(table, look)
    return table
  })
  if (last) last.next = look
  last = look
  waiting = look
  return look.table
}

/** Whether `look` reads every marker a request for `markersSince` needs. */
function reads(look: Look, markersSince: number | undefined): boolean {
  return markersSince === undefined || (look.markersSince !== undefined && look.markersSince <= markersSince)
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b)
}
