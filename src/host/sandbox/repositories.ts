/**
 * Repository metadata under a writable root. A program that can write `.git/hooks/*` or
 * `.git/config` has its code run, unconfined, by the next `git` the host or its user runs
 * there; so these stay read-only even inside a writable root.
 */
import { lstatSync, readdirSync } from 'node:fs'
import path from 'node:path'

function isGitEntry(file: string): boolean {
  try {
    // A `.git` file (a worktree's or a submodule's) names the real metadata directory: as
    // dangerous to rewrite. A symlink is left alone: binding over it would protect only its target.
    const stat = lstatSync(file)
    return stat.isDirectory() || stat.isFile()
  } catch {
    return false
  }
}

/**
 * The `.git` entries of `root` and of its immediate subdirectories: one directory read per
 * root, cheap enough to do at every helper start. Deeper repositories are not looked for.
 */
export function repositoryMetadata(root: string): string[] {
  const candidates = [path.join(root, '.git')]
  try {
    for (const entry of readdirSync(root, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name !== '.git') candidates.push(path.join(root, entry.name, '.git'))
    }
  } catch {
    // an unreadable root has nothing we could protect
  }
  return candidates.filter(isGitEntry)
}
