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

/**
 * Host processes whose command line contains `needle` and of which some thread still runs. A
 * process whose main thread exited shows as a zombie, with no command line of its own, while its
 * other threads run on: its threads are asked.
 */
export function processesMatching(needle: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const threads = readdirSync(`/proc/${entry}/task`).map((thread) => `/proc/${entry}/task/${thread}`)
      const running = threads.filter((thread) => !/^[ZX]/.test(readFileSync(`${thread}/stat`, 'utf8').split(') ')[1] ?? 'Z'))
      const cmdline = running.map((thread) => readFileSync(`${thread}/cmdline`, 'utf8').replaceAll('\0', ' ')).join('\n')
      if (cmdline.includes(needle)) found.push(Number(entry))
    } catch {
      // exited while we looked
    }
  }
  return found
}
