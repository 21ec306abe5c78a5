/**
 * The directories between a writable root and the runtime's files inside it. bubblewrap binds
 * those files by path at each helper start, and the kernel lets a program rename a directory
 * above a mount point: it could move `node_modules` aside and put its own package at the path
 * the next helper (serving another conversation, perhaps) and the host's next start load. Each
 * of these directories bound onto itself is a mount point in the helper's namespace, which the
 * kernel refuses to rename or remove (`EBUSY`).
 */
import path from 'node:path'
import { within } from './places.js'

/**
 * Every directory strictly between a root of `roots` and a file of `files` inside it, each once,
 * outer ones first (a bind covers the mounts made beneath it before). One inside a file of
 * `files` (a package's own `node_modules`) is left out: that file's read-only bind covers it.
 */
export function parentsWithin(files: readonly string[], roots: readonly string[]): string[] {
  const parents = new Set<string>()
  for (const file of files) {
    for (const root of roots) {
      if (file === root || !within(file, root)) continue
      for (let directory = path.dirname(file); directory !== root; directory = path.dirname(directory)) {
        if (!files.some((other) => within(directory, other))) parents.add(directory)
      }
    }
  }
  return [...parents].sort((a, b) => a.length - b.length)
}
