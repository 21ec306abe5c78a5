/**
 * Checking a helper's mounts from outside. bubblewrap binds a root by its path, and looks up
 * where to mount anything (a `.git` too) by path, so a symlink planted between the host's check
 * of that path and bwrap's mount would redirect the bind, or put it somewhere else; the host can
 * see, through /proc, what the helper really has at each path and compare.
 */
import { lstatSync, readFileSync } from 'node:fs'
import { isDead } from '../../system/process-sweep.js'

/**
 * Why the helper whose host PID is `helper` does not have, at each of `roots`, the very
 * directory (device and inode) the host finds at that path; `undefined` when it does. Two
 * `stat`s per root: cheap enough for every run. A helper that is not running has nothing to check.
 */
export function checkHelperRoots(helper: number | undefined, roots: readonly string[]): string | undefined {
  if (helper === undefined) return undefined // no helper, no program: nothing can be written
  for (const root of roots) {
    let inside, outside
    try {
      // Resolved in the helper's mount namespace: what the program writes to at that path. Neither
      // follows a symlink at the root itself: one there now would lead both to the same place.
      inside = lstatSync(`/proc/${helper}/root${root}`)
      outside = lstatSync(root)
    } catch {
      if (isDead(helper)) return undefined // it ended meanwhile (a zombie's root is gone too)
      return `the writable root ${root} could not be checked inside the sandbox`
    }
    if (inside.dev !== outside.dev || inside.ino !== outside.ino) {
      return `the sandbox does not have the writable root ${root} bound where the host found it (was it replaced while the sandbox started?)`
    }
  }
  return undefined
}

/**
 * Why the helper whose host PID is `helper` has no mount at one of `paths` (its writable roots
 * and the metadata bound over them), or `undefined` when each is a mount point. A destination
 * looked up through a symlink swapped in as bubblewrap mounted puts the mount at the symlink's
 * target: the path then stays as the host sees it, unmounted, in the helper too (a root's
 * contents visible read-only, a `.git` writable through its root). Mounts never change once the
 * helper runs (no program may mount), so once per helper is enough.
 */
export function checkHelperMounts(helper: number | undefined, paths: readonly string[]): string | undefined {
  if (helper === undefined || paths.length === 0) return undefined
  let table: string
  try {
    table = readFileSync(`/proc/${helper}/mountinfo`, 'utf8')
  } catch {
    if (isDead(helper)) return undefined
    return 'the sandbox\'s mounts could not be checked'
  }
  // `id parent major:minor root mountpoint ...`: the mount point is the fifth field, with
  // spaces, tabs, newlines and backslashes written as octal escapes.
  const points = new Set(table.split('\n').map((line) => line.split(' ')[4]?.replace(/\\([0-7]{3})/g, (_, code: string) => String.fromCharCode(parseInt(code, 8)))))
  const missing = paths.find((file) => !points.has(file))
  return missing === undefined ? undefined : `the sandbox does not have ${missing} mounted where the host found it (was a directory on its path replaced while the sandbox started?)`
}
