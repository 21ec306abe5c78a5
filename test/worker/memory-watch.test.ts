/**
 * The thread host's RSS backstop (src/host/environments/thread/memory-watch.ts): when the process grows past what
 * the programs serving runs may hold, those programs are stopped, and the message says how
 * many and which setting was hit; a worker not serving a run is left alone.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { type WatchedWorker, memoryWatch } from '../../src/host/environments/thread/memory-watch.js'

function watched(budgetMb: number): WatchedWorker & { stopped: string[] } {
  const stopped: string[] = []
  return { budgetMb, stopped, memoryInUse: async () => undefined, stop: (message) => void stopped.push(message) }
}

describe('the RSS backstop of the thread host', () => {
  it('stops the programs running under a budget, saying how many and naming maxMemoryMb; one between runs runs on', async () => {
    const first = watched(1)
    const second = watched(1)
    const idle = watched(1)
    memoryWatch.running(first, true)
    memoryWatch.running(second, true)
    // Past both budgets and the backstop's margin: the host's own RSS, which the watch reads.
    const held = Buffer.alloc(320 * 2 ** 20, 1)
    for (let waited = 0; first.stopped.length === 0 && waited < 5_000; waited += 20) await sleep(20)
    memoryWatch.running(first, false)
    memoryWatch.running(second, false)
    expect(held.length).toBeGreaterThan(0)
    expect(first.stopped).toEqual([
      expect.stringMatching(/^the host process's memory grew by \d+ MiB while this program ran, past the memory budget of 1 MiB \(maxMemoryMb\) per running program \(2 ran under one\) plus a margin of 256 MiB; .*so this program and the 1 other running under a memory budget at that moment were stopped/),
    ])
    expect(second.stopped).toHaveLength(1)
    expect(idle.stopped).toEqual([])
  })
})
