/**
 * Environments end a few at a time, host-wide (src/system/turns.ts): one that cannot end must not
 * hold that queue. A thread blocked in a system call cannot be ended from inside its process
 * (corpus 149, the thread host's known limit), so a program that blocks nine of them would
 * otherwise stop every later environment of every runtime in the host from ending.
 */
import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { childProcesses } from '../helpers/processes.mjs'
import { startRuntime } from '../helpers/runtime.js'

// Unref'd: the leak check at the file's end counts a pending timer of the test's own as a leak.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref())

describe('environments that cannot end', () => {
  it('hold no other environment’s end: after nine thread-tier runs stuck opening a FIFO time out, a default-tier runtime with an owner is disposed and leaves no helper', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'ptc-stuck-'))
    const fifo = path.join(directory, 'fifo')
    execFileSync('mkfifo', [fifo])
    const stuck = await startRuntime({ isolation: 'thread', timeoutMs: 300, cwd: directory })
    let other: Awaited<ReturnType<typeof startRuntime>> | undefined
    try {
      const program = `const fs = await import('node:fs'); fs.readFileSync(${JSON.stringify(fifo)})`
      const results = await Promise.all(Array.from({ length: 9 }, () => stuck.run(program)))
      expect(results.map((result) => result.error?.kind)).toEqual(Array(9).fill('timeout'))

      const before = childProcesses()
      other = await startRuntime({ retainState: true })
      const owner = {}
      expect((await other.run('globalThis.kept = 1; return kept', { stateOwner: owner })).value).toBe(1)
      await other.runtime.release(owner)
      const disposed = await Promise.race([other.dispose().then(() => 'disposed'), sleep(10_000).then(() => 'still disposing')])
      expect(disposed).toBe('disposed')
      expect(childProcesses().filter((pid) => !before.includes(pid))).toEqual([])
    } finally {
      await other?.dispose()
      // A writer lets every stuck open return: the threads end, and so can their runtime. With no
      // reader left (ENXIO) there is nothing to release.
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error
      }
      await stuck.dispose()
      rmSync(directory, { recursive: true, force: true })
    }
  }, 60_000)
})
