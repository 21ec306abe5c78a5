/**
 * Suite-wide leak accounting. Vitest loads this setup file into every test file's process
 * (pool `forks`: one process per file), so each file is measured on its own: a baseline of
 * threads (every live Worker is one), direct child processes (running, and exited but never
 * reaped), open descriptors and active libuv handles is taken before the file's own hooks run,
 * and after all of its tests and `afterAll` hooks (after hooks run in reverse order, so this one
 * runs last) nothing may be left above it. Vitest's own handles are part of the baseline.
 *
 * Exits are reaped asynchronously, so the comparison retries for a bounded time before it
 * fails (a loaded two-core machine can take a moment to reap a worker).
 */
import { readdirSync, readlinkSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, expect } from 'vitest'
import { isUnnamedFile, leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { zombieChildren } from '../helpers/processes.mjs'

const RETRIES = 40
const RETRY_MS = 50

function handleCounts(): Map<string, number> {
  const counts = new Map<string, number>()
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1)
  return counts
}

/** Zombies beyond the baseline, after giving their reapers a bounded moment. */
async function zombiesSince(baseline: number[]): Promise<number[]> {
  for (let attempt = 0; ; attempt++) {
    const extra = zombieChildren().filter((pid) => !baseline.includes(pid))
    if (extra.length === 0 || attempt === RETRIES) return extra
    await sleep(RETRY_MS)
  }
}

/** What each open descriptor refers to (`pipe:[…]`, `socket:[…]`, a path). */
function descriptorTargets(): string[] {
  const targets: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (!isUnnamedFile(target)) targets.push(target)
    } catch {
      // closed while we looked (the directory listing's own descriptor, for one)
    }
  }
  return targets
}

/** Descriptors open now beyond the baseline, by target, so a failure says what was left open. */
function descriptorsSince(baseline: string[]): string[] {
  const remaining = [...baseline]
  return descriptorTargets().filter((target) => {
    const index = remaining.indexOf(target)
    if (index === -1) return true
    remaining.splice(index, 1)
    return false
  })
}

/** Active handles above the baseline, by type, after waiting (bounded) for them to close. */
async function handlesSince(baseline: Map<string, number>): Promise<Record<string, number>> {
  for (let attempt = 0; ; attempt++) {
    const extra: Record<string, number> = {}
    for (const [type, count] of handleCounts()) {
      const excess = count - (baseline.get(type) ?? 0)
      if (excess > 0) extra[type] = excess
    }
    if (Object.keys(extra).length === 0 || attempt === RETRIES) return extra
    await sleep(RETRY_MS)
  }
}

let resources: ResourceSnapshot | undefined
let handles = new Map<string, number>()
let descriptors: string[] = []
let zombies: number[] = []

beforeAll(async () => {
  if (process.env.PTC_LEAK_CHECK === '0') return
  resources = await resourceBaseline()
  handles = handleCounts()
  descriptors = descriptorTargets()
  zombies = zombieChildren()
}, 30_000)

afterAll(async () => {
  if (!resources) return
  const { threads, children, descriptors: excess } = await leakedSince(resources)
  // Counted first (vitest may swap one pipe for another), then named when there are too many.
  const leaked = {
    threads,
    children,
    descriptors: excess > 0 ? descriptorsSince(descriptors) : [],
    handles: await handlesSince(handles),
  }
  // Reported, not failed: a subprocess of a worker stuck in synchronous code when its run is
  // stopped can never be reaped (only that worker's event loop could), a known limitation of
  // the in-process host.
  const unreaped = await zombiesSince(zombies)
  if (unreaped.length > 0) {
    console.warn(`leak check: ${unreaped.length} exited child process(es) were never reaped (${unreaped.join(', ')}); see the in-process host's limitations`)
  }
  expect(leaked, 'the test file left threads, child processes, descriptors or handles behind').toEqual({
    threads: 0,
    children: [],
    descriptors: [],
    handles: {},
  })
}, 30_000)
