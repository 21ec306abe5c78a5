/**
 * Checking a helper's writable roots from outside. bubblewrap binds a root by its path, so a
 * symlink planted between the host's check of that path and bwrap's mount would redirect the
 * bind; the host can see, through /proc, what the helper really has at each root and compare.
 */
import { statSync } from 'node:fs'
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
      // Resolved in the helper's mount namespace: what the program writes to at that path.
      inside = statSync(`/proc/${helper}/root${root}`)
      outside = statSync(root)
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
