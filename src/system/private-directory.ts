/**
 * This host process's private directory for files it makes for its helpers to read (Python's
 * interpreter snapshot, several MB): made on first use, readable by this user only, and
 * removed as the process exits. A host killed before it could remove its directory leaves it
 * behind; the next host here to make one removes those of hosts that are gone (their names carry
 * the PID). A confined helper sees each file through a read-only bind, never the directory.
 */
import { lstatSync, mkdtempSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { removeAbandoned } from './abandoned.js'

const PREFIX = 'ptc-runtime-files-'

let directory: string | undefined

/** The host a directory beside ours belongs to, when it is one of ours (this user's). */
function owner(entry: string): number | undefined {
  const pid = new RegExp(`^${PREFIX}(\\d+)-`).exec(entry)?.[1]
  if (pid === undefined) return undefined
  try {
    return lstatSync(path.join(os.tmpdir(), entry)).uid === process.getuid?.() ? Number(pid) : undefined
  } catch {
    return undefined
  }
}

/**
 * Removes a directory of this module's making: its files, then itself, never recursing. What
 * else is there (a directory, a link planted by whatever could write to the temporary
 * directory) makes `rmdirSync` fail, and the directory stays.
 */
function remove(made: string): void {
  for (const entry of readdirSync(made, { withFileTypes: true })) if (entry.isFile()) unlinkSync(path.join(made, entry.name))
  rmdirSync(made)
}

/** The directory, made (mode 0700) on the first call. */
export function privateDirectory(): string {
  if (directory === undefined) {
    removeAbandoned(os.tmpdir(), owner, remove)
    const made = (directory = mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`)))
    process.once('exit', () => {
      try {
        remove(made)
      } catch {
        // best effort: the next host here removes it
      }
    })
  }
  return directory
}
