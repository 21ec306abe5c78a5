import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** Where the executable `command` is on PATH, or `undefined`. */
export function onPath(command: string): string | undefined {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .map((directory) => path.join(directory, command))
    .find((candidate) => {
      try {
        accessSync(candidate, constants.X_OK)
        return true
      } catch {
        return false
      }
    })
}

/** bubblewrap on PATH, or `undefined` (the confinement tests then skip, saying why). */
export const bwrap = onPath('bwrap')

if (!bwrap) console.warn('confinement tests skipped: bubblewrap (bwrap) is not installed on this machine')

/** A fresh directory under os.tmpdir() (real path) and its removal. */
export function tempDirectory(prefix: string): { dir: string; remove: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), `${prefix}-`)))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A string unique to one test, for finding its processes and files. */
export function marker(): string {
  return `${process.pid}${Math.floor(Math.random() * 1e9)}`
}

/** The kernel's flag on a task that has begun to exit (`PF_EXITING`, in /proc's stat). */
const EXITING = 0x4
/** SIGKILL's bit in /proc's masks of pending signals. */
const SIGKILL_BIT = 1n << 8n

/** Whether a thread's /proc stat says it runs: not a zombie, and not already exiting. */
function threadRuns(stat: string): boolean {
  const fields = (stat.split(') ')[1] ?? 'Z').split(' ')
  return !/^[ZX]/.test(fields[0]!) && (Number(fields[6]) & EXITING) === 0
}

/**
 * Whether the whole of process `pid` has a SIGKILL pending: it never runs another instruction of
 * its own. A helper and all it starts run at SCHED_IDLE, so on a machine other work keeps busy a
 * killed one waits a while for a core to carry out its end (0.3 to 0.4 s, measured on two
 * saturated cores), and /proc shows it running until then.
 */
function killed(pid: string): boolean {
  const pending = /^ShdPnd:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return pending !== null && (BigInt(`0x${pending[1]}`) & SIGKILL_BIT) !== 0n
}

/**
 * Host processes whose command line contains `needle` and of which some thread still runs (a
 * killed process does not: `killed`). A process whose main thread exited shows as a zombie, with
 * no command line of its own, while its other threads run on: its threads are asked.
 */
export function processesMatching(needle: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (killed(entry)) continue
      const threads = readdirSync(`/proc/${entry}/task`).map((thread) => `/proc/${entry}/task/${thread}`)
      const running = threads.filter((thread) => threadRuns(readFileSync(`${thread}/stat`, 'utf8')))
      const cmdline = running.map((thread) => readFileSync(`${thread}/cmdline`, 'utf8').replaceAll('\0', ' ')).join('\n')
      if (cmdline.includes(needle)) found.push(Number(entry))
    } catch {
      // exited while we looked
    }
  }
  return found
}
