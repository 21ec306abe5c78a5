/**
 * Repository metadata under a writable root. A program that can write `.git/hooks/*` or
 * `.git/config` has its code run, unconfined, by the next `git` the host or its user runs
 * there; so these stay read-only even inside a writable root.
 */
import { lstatSync, opendirSync, statSync } from 'node:fs'
import path from 'node:path'

/**
 * The entries of a writable root read at a helper's start, on the host's event loop, in a
 * directory a program can fill: 4 096 subdirectories took 7.5-8.3 ms to look through here (median of 21: 8.3).
 */
export const MAX_ROOT_ENTRIES = 4096
/**
 * The size of a writable root's directory read at a helper's start. A directory keeps the size
 * its most entries took (ext4 never shrinks one) and reading it walks all of it, emptied or not:
 * a root a program grew to 1.5 million names with hard links and emptied (585 MB) took 111-587 ms
 * of the host's event loop at every start, though it held no entry. 4 096 entries named at the
 * longest (255 bytes) take 1.5 MB; reading 4 MB takes about 1 ms.
 */
export const MAX_ROOT_BYTES = 4 * 1024 * 1024
/** The repositories a helper binds read-only: each is a descriptor, a mount and three arguments of bubblewrap's. */
export const MAX_REPOSITORIES = 256

/**
 * What the host could not read fails the start: a program can take the host's read permission
 * away from its own root or a directory in it (the host's user is its user), and a repository
 * the host did not see would be left writable.
 */
function unreadable(what: string, error: unknown): Error {
  return new Error(`${what} cannot be read for repositories (.git): ${(error as NodeJS.ErrnoException).code ?? String(error)}; a helper is not started where one could be left writable`)
}

function isGitEntry(file: string): boolean {
  // A `.git` file (a worktree's or a submodule's) names the real metadata directory: as
  // dangerous to rewrite. A symlink is left alone: binding over it would protect only its target.
  try {
    const stat = lstatSync(file, { throwIfNoEntry: false })
    return stat !== undefined && (stat.isDirectory() || stat.isFile())
  } catch (error) {
    // The directory holding it became a file since it was listed: no repository there.
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return false
    throw unreadable(path.dirname(file), error)
  }
}

/** The subdirectories of `root`, read one batch at a time; throws past MAX_ROOT_ENTRIES entries or MAX_ROOT_BYTES. */
function subdirectories(root: string): string[] {
  let directory
  try {
    directory = opendirSync(root, { bufferSize: 256 })
  } catch (error) {
    throw unreadable(`the writable root ${root}`, error)
  }
  const found: string[] = []
  try {
    const { size } = statSync(root)
    if (size > MAX_ROOT_BYTES) {
      throw new Error(`the writable root ${root} is a directory of ${size} bytes, more than the ${MAX_ROOT_BYTES} read at each helper start for repositories (.git): a directory keeps the size of the most entries it held, and reading it costs as much`)
    }
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
 * more entries than MAX_ROOT_ENTRIES, a directory larger than MAX_ROOT_BYTES or more repositories
 * than MAX_REPOSITORIES: the helper is then not started.
 */
export function repositoryMetadata(root: string): string[] {
  const candidates = [root, ...subdirectories(root)].map((directory) => path.join(directory, '.git'))
  const found = candidates.filter(isGitEntry)
  if (found.length > MAX_REPOSITORIES) {
    throw new Error(`the writable root ${root} holds more than ${MAX_REPOSITORIES} repositories (.git); a helper binds the metadata of at most that many read-only`)
  }
  return found
}
