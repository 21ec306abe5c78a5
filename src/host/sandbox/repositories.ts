/**
 * Repository metadata under a writable root. A program that can write `.git/hooks/*` or
 * `.git/config` has its code run, unconfined, by the next `git` the host or its user runs
 * there; so these stay read-only even inside a writable root.
 */
import { lstatSync, opendirSync } from 'node:fs'
import path from 'node:path'

/**
 * The entries of a writable root read at a helper's start, on the host's event loop, in a
 * directory a program can fill: 4 096 subdirectories took 7.5-8.3 ms to look through here (median of 21: 8.3).
 */
export const MAX_ROOT_ENTRIES = 4096
/** The repositories a helper binds read-only: each is a descriptor, a mount and three arguments of bubblewrap's. */
export const MAX_REPOSITORIES = 256

function isGitEntry(file: string): boolean {
  // A `.git` file (a worktree's or a submodule's) names the real metadata directory: as
  // dangerous to rewrite. A symlink is left alone: binding over it would protect only its target.
  const stat = lstatSync(file, { throwIfNoEntry: false })
  return stat !== undefined && (stat.isDirectory() || stat.isFile())
}

/** The subdirectories of `root`, read one batch at a time; throws past MAX_ROOT_ENTRIES entries. */
function subdirectories(root: string): string[] {
  let directory
  try {
    directory = opendirSync(root, { bufferSize: 256 })
  } catch {
    return [] // an unreadable root has nothing we could protect
  }
  const found: string[] = []
  try {
    for (let count = 1, entry = directory.readSync(); entry !== null; count++, entry = directory.readSync()) {
      if (count > MAX_ROOT_ENTRIES) {
        throw new Error(`the writable root ${root} holds more than ${MAX_ROOT_ENTRIES} entries; repositories (.git) are looked for among at most that many at each helper start`)
      }
      if (entry.isDirectory() && entry.name !== '.git') found.push(path.join(root, entry.name))
    }
  } finally {
    directory.closeSync()
  }
  return found
}

/**
 * The `.git` entries of `root` and of its immediate subdirectories, looked for at every helper
 * start; deeper repositories are not. Throws, naming the root and the bound, for a root with
 * more entries than MAX_ROOT_ENTRIES or more repositories than MAX_REPOSITORIES: the helper is
 * then not started.
 */
export function repositoryMetadata(root: string): string[] {
  const candidates = [root, ...subdirectories(root)].map((directory) => path.join(directory, '.git'))
  const found = candidates.filter(isGitEntry)
  if (found.length > MAX_REPOSITORIES) {
    throw new Error(`the writable root ${root} holds more than ${MAX_REPOSITORIES} repositories (.git); a helper binds the metadata of at most that many read-only`)
  }
  return found
}
