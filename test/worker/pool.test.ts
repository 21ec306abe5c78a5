import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { PoolDemand, SHRINK_AFTER_MS } from '../../src/host/environments/pool-demand.js'
import { SNAPSHOT_CHILD_MARKER } from '../../src/host/environments/process/helper-snapshot.js'
import { childProcesses } from '../helpers/processes.mjs'
import { startRuntime } from '../helpers/runtime.js'

/**
 * Helper processes of this host: its direct children, but for the process tier's startup
 * snapshot's builder and proving helper, which run for a moment after a runtime starts.
 */
const helpers = () => childProcesses().filter((pid) => !snapshotMaker(pid)).length

function snapshotMaker(pid: number): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    return args.includes(SNAPSHOT_CHILD_MARKER)
  } catch {
    return false // gone
  }
}

/** Waits until the count `probe` returns has not changed for a while, and returns it. */
async function steady(probe: () => number): Promise<number> {
  let last = probe()
  for (let still = 0; still < 10; ) {
    await sleep(100)
    const now = probe()
    still = now === last ? still + 1 : 0
    last = now
  }
  return last
}

describe('the pool follows demand', () => {
  it('doubles its target at each take that finds no started spare, up to the ceiling', () => {
    const demand = new PoolDemand({ floor: 1, ceiling: 6 })
    demand.took(true, 0)
    expect(demand.target).toBe(1)
    const targets = [1, 2, 3, 4].map((at) => (demand.took(false, at), demand.target))
    expect(targets).toEqual([2, 4, 6, 6])
  })

  it('halves its target after a quiet spell, back down to poolSize, and never below', () => {
    const demand = new PoolDemand({ floor: 1, ceiling: 8 })
    for (let at = 0; at < 3; at++) demand.took(false, at)
    expect(demand.target).toBe(8)
    expect(demand.shrink(SHRINK_AFTER_MS - 1)).toBe(false)
    const targets = [1, 2, 3, 4].map((step) => (demand.shrink(step * SHRINK_AFTER_MS + 2), demand.target))
    expect(targets).toEqual([4, 2, 1, 1])
  })

  it('stays off with poolSize 0, whatever the demand', () => {
    const demand = new PoolDemand({ floor: 0, ceiling: 16 })
    for (let at = 0; at < 5; at++) demand.took(false, at)
    expect(demand.target).toBe(0)
  })

  it('grows past poolSize under back-to-back one-shot runs on the default tier, within poolMemoryMb', async () => {
    // 64 MB holds 4 helpers at 16 MB each. The process tier, named, also under the container
    // suite: a container tier's pool stays at poolSize (its tier states no spareMb).
    const env = await startRuntime({ isolation: 'process', poolSize: 1, poolMemoryMb: 64 })
    try {
      expect(await steady(helpers)).toBe(1)
      for (let index = 0; index < 12; index++) expect((await env.run('return 1')).value).toBe(1)
      const spares = await steady(helpers)
      expect(spares).toBeGreaterThan(1)
      expect(spares).toBeLessThanOrEqual(4)
    } finally {
      await env.dispose()
    }
  }, 120_000)

  it('keeps poolSize spares when poolMemoryMb is 0', async () => {
    const env = await startRuntime({ isolation: 'process', poolSize: 2, poolMemoryMb: 0 })
    try {
      for (let index = 0; index < 6; index++) expect((await env.run('return 1')).value).toBe(1)
      expect(await steady(helpers)).toBe(2)
    } finally {
      await env.dispose()
    }
  }, 120_000)

  it('refuses a poolMemoryMb that is not a natural number, naming the field', async () => {
    await expect(startRuntime({ poolMemoryMb: -1 })).rejects.toThrow(/poolMemoryMb/)
    await expect(startRuntime({ poolMemoryMb: 1.5 })).rejects.toThrow(/poolMemoryMb/)
  })
})
