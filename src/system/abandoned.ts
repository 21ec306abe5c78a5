/**
 * What hosts that are gone left behind: a directory named after its host's PID (the container
 * engine's working directory, a helper CPU group) outlives a host killed before it could remove
 * it, and nobody else will.
 */
import { readdirSync } from 'node:fs'
import path from 'node:path'

/**
 * Removes (with `remove`) each entry of `directory` whose name `owner` reads a host's PID from,
 * where no process of that PID runs any more; this process's own entries stay. What `remove`
 * throws is ignored: another user's entry, or one still in use, stays where it is.
 */
export function removeAbandoned(directory: string, owner: (entry: string) => number | undefined, remove: (file: string) => void): void {
  let entries: string[]
  try {
    entries = readdirSync(directory)
  } catch {
    return
  }
  for (const entry of entries) {
    const pid = owner(entry)
    if (pid === undefined || pid === process.pid || running(pid)) continue
    try {
      remove(path.join(directory, entry))
    } catch {
      // not ours to remove, or still in use
    }
  }
}

/** Whether a process of that number exists (of any user; a zombie counts, to be safe). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
