import { spawnSync } from 'node:child_process'

/**
 * Tests leave the checkout as they found it: a program that writes into the host's working
 * directory, or a test that forgets a file, would otherwise be committed with the next change.
 * Records `git status --porcelain` before any test runs and fails the test run (exit code 1) at
 * its end if it changed: vitest only logs an error thrown here, so the exit code is set first.
 * Outside a git checkout (a packed package, a tarball) there is nothing to compare.
 * Edits made by hand while the suite runs count too.
 */
export default function setup() {
  const before = status()
  if (before === undefined) return
  return () => {
    const after = status()
    if (after === undefined || after === before) return
    const was = new Set(before.split('\n'))
    const changed = after.split('\n').filter((line) => line && !was.has(line))
    const gone = before.split('\n').filter((line) => line && !after.split('\n').includes(line))
    process.exitCode = 1
    throw new Error(
      `the test run changed the checkout's git status: ${[...changed.map((line) => `now ${line}`), ...gone.map((line) => `no longer ${line}`)].join('; ')}`,
    )
  }
}

/** The checkout's `git status --porcelain`, or undefined when this is not a git checkout (or git is missing). */
function status(): string | undefined {
  const result = spawnSync('git', ['status', '--porcelain', '--untracked-files=all'], { encoding: 'utf8' })
  return result.status === 0 ? result.stdout : undefined
}
