/**
 * What the thread soak samples (bench/thread-soak.mjs, thread-soak-baseline.mjs): the process's
 * memory after full collections, split by where it lives, so the process's own growth and
 * worker teardown's can be told apart from V8's young generation of the host isolate.
 */
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import v8 from 'node:v8'

const MIB = 2 ** 20

/** glibc's malloc arenas other than the main one are heaps of their own, each aligned to 64 MiB. */
const ARENA_ALIGNMENT = 64 * MIB

/**
 * Resident anonymous memory by where it comes from, in MiB, from /proc/self/smaps: malloc's
 * (the main arena's `[heap]` and the other arenas' heaps, which threads allocate from, a worker's
 * thread included) and the rest (V8's heap pages, thread stacks, large mmapped chunks). Empty off Linux.
 */
function residentBySource() {
  let text
  try {
    text = readFileSync('/proc/self/smaps', 'utf8')
  } catch {
    return {}
  }
  const resident = { malloc: 0, arenas: 0, other: 0 }
  let kind
  for (const line of text.split('\n')) {
    const mapping = /^([0-9a-f]+)-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line)
    if (mapping) {
      const [, start, path] = mapping
      const arena = !path && Number.parseInt(start, 16) % ARENA_ALIGNMENT === 0
      if (arena) resident.arenas++
      kind = path === '[heap]' || arena ? 'malloc' : path ? undefined : 'other'
      continue
    }
    const rss = kind && /^Rss:\s+(\d+) kB/.exec(line)
    if (rss) resident[kind] += Number(rss[1]) / 1024
  }
  return resident
}

/**
 * The process's threads: Node's and V8's own, plus one per live worker (a pooled spare's
 * included), whose memory RSS counts while it lives. Undefined off Linux.
 */
function threads() {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1])
  } catch {
    return undefined
  }
}

/** The host isolate's young generation as V8 holds it now (semi-spaces and new large objects), in MiB. */
function youngGeneration() {
  let bytes = 0
  for (const space of v8.getHeapSpaceStatistics()) if (space.space_name.startsWith('new_')) bytes += space.space_size
  return bytes / MIB
}

/**
 * A full collection that also gives back what V8 holds beyond need (the young generation V8
 * sized for the allocation rate): what V8 itself does under memory pressure. Node 22 and later
 * take the `last-resort` flavour; Node 20's V8 ignores it and collects as a plain `gc()`.
 */
function collect() {
  globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' })
}

/**
 * What the process holds between runs, in MiB: the smallest RSS of a few samples after
 * collections (freed worker memory returns to the system lazily), with its split.
 */
export async function settledMemory() {
  if (typeof globalThis.gc !== 'function') throw new Error('thread-soak: run with --expose-gc')
  let best
  for (let sample = 0; sample < 5; sample++) {
    collect()
    await sleep(40)
    const usage = process.memoryUsage()
    const young = youngGeneration()
    if (!best || usage.rss < best.usage.rss) best = { usage, young, threads: threads() }
  }
  const { usage, young, threads: threadCount } = best
  const { malloc, other, arenas } = residentBySource()
  return {
    rss: usage.rss / MIB,
    young,
    heap: usage.heapUsed / MIB,
    heapTotal: usage.heapTotal / MIB,
    external: usage.external / MIB,
    buffers: usage.arrayBuffers / MIB,
    malloc,
    other,
    arenas,
    threads: threadCount,
  }
}

/**
 * The soak's loop: `each()` `total` times, `lanes` at a time, and after every `checkpoint` runs
 * a row of settled memory and the lap's runs per second, handed to `sampled`.
 */
export async function soak({ total, checkpoint, lanes }, each, sampled) {
  let done = 0
  while (done < total) {
    const before = done
    const until = Math.min(total, done + checkpoint)
    const lapStart = performance.now()
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        while (done < until) await each(done++)
      }),
    )
    const lapMs = performance.now() - lapStart
    sampled({ runs: done, ...(await settledMemory()), runsPerSecond: (done - before) / (lapMs / 1000) })
  }
}
