/**
 * The shared look at the machine's processes that sweeps without a PID namespace rely on: one
 * look serves every request made before it started, and it finds subprocess markers exactly.
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { processTable } from '../../src/system/process-table.js'
import { SUBPROCESS_MARKER_VARIABLE } from '../../src/protocol/messages.js'

const comm = (pid: number) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim()

describe.skipIf(process.platform !== 'linux')('the machine process table', () => {
  it('serves every request made before a look starts with that look, and later ones with the next', async () => {
    const first = processTable(false)
    const second = processTable(true)
    expect(second).toBe(first)
    const table = await first
    expect(table.stats.get(process.ppid)).toBeDefined()
    expect(table.stats.has(process.pid)).toBe(false)
    expect(processTable(false)).not.toBe(first)
  })

  // A sweep that killed nothing since its last look needs only a later one: sweeps a few
  // milliseconds apart each waited for one look more, and a look may take seconds.
  it('serves a request after a table acted on without a kill with the look that started as that one ended, if it reads what is asked', async () => {
    const first = await processTable(false)
    const second = processTable(false)
    await new Promise((resolve) => setImmediate(resolve)) // the second look has started
    expect(processTable(false, first)).toBe(second)
    const third = processTable(true, first)
    expect(third).not.toBe(second)
    expect(processTable(false)).toBe(third)
    await Promise.all([second, third])
  })

  it('finds a marker only as a variable of its own, not inside another value', async () => {
    const marker = `test-${process.pid}-${Date.now()}`
    const marked = spawn('sleep', ['30'], { env: { PATH: process.env.PATH, [SUBPROCESS_MARKER_VARIABLE]: marker }, stdio: 'ignore' })
    const decoy = spawn('sleep', ['30'], { env: { PATH: process.env.PATH, DECOY: `${SUBPROCESS_MARKER_VARIABLE}=${marker}` }, stdio: 'ignore' })
    try {
      // Until it has exec'd, a child shows its parent's environment.
      for (const child of [marked, decoy]) while (comm(child.pid!) !== 'sleep') await new Promise((resolve) => setTimeout(resolve, 5))
      const table = await processTable(true)
      expect(table.marked.get(marker)).toEqual([marked.pid])
    } finally {
      marked.kill('SIGKILL')
      decoy.kill('SIGKILL')
    }
  })
})
