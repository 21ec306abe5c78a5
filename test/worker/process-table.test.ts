/**
 * The shared look at the machine's processes that sweeps without a PID namespace rely on: one
 * look serves every request made before it started, and it finds subprocess markers exactly.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { HOST_STARTED, parseStat, processTable } from '../../src/system/process-table.js'
import { SUBPROCESS_MARKER_VARIABLE } from '../../src/protocol/messages.js'

const comm = (pid: number) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
const started = (pid: number) => Number(parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).started)
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A `sleep` carrying `marker`, once it has exec'd (until then a child shows its parent's environment). */
async function markedSleep(marker: string) {
  const child = spawn('sleep', ['30'], { env: { PATH: process.env.PATH, [SUBPROCESS_MARKER_VARIABLE]: marker }, stdio: 'ignore' })
  while (comm(child.pid!) !== 'sleep') await pause(5)
  return child
}

describe.skipIf(process.platform !== 'linux')('the machine process table', () => {
  it('serves every request made before a look starts with that look, and later ones with the next', async () => {
    const first = processTable(undefined)
    const second = processTable(HOST_STARTED)
    expect(second).toBe(first)
    const table = await first
    expect(table.stats.get(process.ppid)).toBeDefined()
    expect(table.stats.has(process.pid)).toBe(false)
    expect(processTable(undefined)).not.toBe(first)
  })

  // A sweep that killed nothing since its last look needs only a later one: sweeps a few
  // milliseconds apart each waited for one look more, and a look may take seconds.
  it('serves a request after a table acted on without a kill with the look that started as that one ended, if it reads what is asked', async () => {
    const first = await processTable(undefined)
    const second = processTable(undefined)
    await new Promise((resolve) => setImmediate(resolve)) // the second look has started
    expect(processTable(undefined, first)).toBe(second)
    const third = processTable(HOST_STARTED, first)
    expect(third).not.toBe(second)
    expect(processTable(undefined)).toBe(third)
    await Promise.all([second, third])
  })

  it('finds a marker only as a variable of its own, not inside another value', async () => {
    const marker = `test-${process.pid}-${Date.now()}`
    const marked = spawn('sleep', ['30'], { env: { PATH: process.env.PATH, [SUBPROCESS_MARKER_VARIABLE]: marker }, stdio: 'ignore' })
    const decoy = spawn('sleep', ['30'], { env: { PATH: process.env.PATH, DECOY: `${SUBPROCESS_MARKER_VARIABLE}=${marker}` }, stdio: 'ignore' })
    try {
      // Until it has exec'd, a child shows its parent's environment.
      for (const child of [marked, decoy]) while (comm(child.pid!) !== 'sleep') await new Promise((resolve) => setTimeout(resolve, 5))
      const table = await processTable(HOST_STARTED)
      expect(table.marked.get(marker)).toEqual([marked.pid])
    } finally {
      marked.kill('SIGKILL')
      decoy.kill('SIGKILL')
    }
  })

  // A program's subprocess is never older than the host that ran the program: a sweep reads the
  // environment of no process started before the host (on most machines, most of them).
  it('reads markers only from processes started at or after the tick asked, and a shared look reads for the earliest asked', async () => {
    const marker = `test-${process.pid}-${Date.now()}`
    const older = await markedSleep(marker)
    await pause(30) // clock ticks are 10 ms apart
    const younger = await markedSleep(marker)
    try {
      const since = started(younger.pid!)
      expect(since).toBeGreaterThan(started(older.pid!))
      expect(started(older.pid!)).toBeGreaterThanOrEqual(HOST_STARTED)
      expect((await processTable(since)).marked.get(marker)).toEqual([younger.pid])
      // Joined before it started, the look reads for the earlier tick too.
      const late = processTable(since)
      expect(processTable(HOST_STARTED)).toBe(late)
      expect([...(await late).marked.get(marker)!].sort()).toEqual([older.pid, younger.pid].sort())
      // A look of a later tick does not serve a request of an earlier one.
      const first = await processTable(since)
      const next = processTable(since)
      await new Promise((resolve) => setImmediate(resolve)) // the next look has started
      expect(processTable(HOST_STARTED, first)).not.toBe(next)
      await next
    } finally {
      older.kill('SIGKILL')
      younger.kill('SIGKILL')
    }
  })
})
