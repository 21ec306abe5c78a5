/**
 * Shared measurement helpers for the bench tables: clocks, interleaved rounds, a settle step
 * that waits for background work (pool refills) to finish, summaries and markdown tables.
 */
import { readFileSync, readdirSync } from 'node:fs'
import os from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'

/** `BENCH_QUICK=1`: a smoke run of about a minute; the numbers are noisier. */
export const QUICK = process.env.BENCH_QUICK === '1'

/** Picks the full or the quick value of an iteration count. */
export const scale = (full, quick) => (QUICK ? quick : full)

export const now = () => performance.now()

export { sleep }

/**
 * Threads that are running or waiting for a CPU, in this process (but for the main thread) and
 * in every process it started (a helper process still booting counts).
 */
function runnableThreads() {
  try {
    let count = 0
    const processes = [process.pid]
    for (let i = 0; i < processes.length; i++) {
      const pid = processes[i]
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
          if (Number(tid) !== process.pid && stat[stat.lastIndexOf(')') + 2] === 'R') count++
          processes.push(...readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number))
        } catch {
          // the thread or process ended while we looked
        }
      }
    }
    return count
  } catch {
    return undefined // no procfs: fall back to CPU time
  }
}

/**
 * A started `monitorEventLoopDelay` histogram that has taken its first sample: the histogram
 * records nothing until its timer has fired once, so a block that begins in the same tick as
 * `enable()` (a synchronous disposal, say) would go unseen. Resolves once that first firing is past.
 */
export async function loopDelayMonitor(resolution = 1) {
  const histogram = monitorEventLoopDelay({ resolution })
  histogram.enable()
  await sleep(resolution * 3 + 5)
  histogram.reset()
  return histogram
}

/**
 * Waits until this process and its children are idle: nothing of theirs runnable (a worker or
 * helper still booting is runnable even when a loaded machine starves it of CPU) in two windows
 * in a row, or, without procfs, little CPU used by this process in one window. Every sample in a latency table is taken after the same
 * settle, so a pool refill never lands inside the next measurement and baselines get the same
 * treatment.
 */
export async function settle({ minMs = 2, maxMs = 2000, windowMs = 8, busy = 0.2 } = {}) {
  await sleep(minMs)
  const deadline = now() + maxMs
  let quiet = 0
  while (now() < deadline) {
    const cpu = process.cpuUsage()
    const start = now()
    await sleep(windowMs)
    const runnable = runnableThreads()
    if (runnable === undefined) {
      const used = process.cpuUsage(cpu)
      if ((used.user + used.system) / 1000 / (now() - start) < busy) return
    } else if (runnable === 0 && ++quiet >= 2) {
      return
    } else if (runnable > 0) {
      quiet = 0
    }
  }
}

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[index]
}

/** Median and p95 (nearest rank) of a list of samples. */
export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort()
  return { n: sorted.length, median: quantile(sorted, 0.5), p95: quantile(sorted, 0.95) }
}

/**
 * Runs `rounds` rounds; in each round every scenario takes `per` samples, in an order rotated
 * from round to round, so all scenarios share the machine's state and no one always goes first.
 * A scenario is `{ name, sample }` where `sample()` resolves to one measurement (or an array of
 * them); it may also have `before()`/`after()` run once around all its rounds.
 */
export async function interleave(scenarios, { rounds, per, gap = settle }) {
  const samples = new Map(scenarios.map((scenario) => [scenario.name, []]))
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < scenarios.length; offset++) {
      const scenario = scenarios[(round + offset) % scenarios.length]
      const into = samples.get(scenario.name)
      const count = typeof per === 'function' ? per(scenario) : per
      for (let i = 0; i < count; i++) {
        await gap()
        const value = await scenario.sample()
        if (Array.isArray(value)) into.push(...value)
        else into.push(value)
      }
    }
  }
  return samples
}

/** Formats a number with about three significant digits. */
export function fmt(value, digits = 3) {
  if (value === undefined || value === null || Number.isNaN(value)) return 'n/a'
  if (!Number.isFinite(value)) return String(value)
  const magnitude = Math.abs(value)
  if (magnitude >= 100) return value.toFixed(0)
  if (magnitude === 0) return '0'
  return value.toPrecision(digits).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '')
}

/** A ratio as `2.4x`. */
export const times = (value) => (Number.isFinite(value) ? `${fmt(value)}x` : 'n/a')

/** Prints a markdown table. */
export function table(title, header, rows) {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => String(row[column]).length)))
  const line = (cells) => `| ${cells.map((cell, column) => String(cell).padEnd(widths[column])).join(' | ')} |`
  console.log(`\n### ${title}\n`)
  console.log(line(header))
  console.log(`|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`)
  for (const row of rows) console.log(line(row))
}

/** Prints one target line: informational, never fails the process. */
export function target(description, measured, pass) {
  console.log(`- target: ${description} — measured ${measured} — ${pass ? 'PASS' : 'MISS'}`)
}

/** Prints a note under a table (skipped scenarios, caveats). */
export function note(text) {
  console.log(`- ${text}`)
}

/** One-line description of the machine and its load, printed at the top of each table. */
export function machine() {
  const cpus = os.cpus()
  const load = os.loadavg().map((value) => value.toFixed(2)).join(' ')
  return `Node ${process.version}, ${cpus.length} x ${cpus[0]?.model.trim() ?? 'unknown CPU'}, load ${load}`
}

/** A fixed loop; its time tells how contended the machine is (about 14 ms when idle here). */
export function noiseProbe() {
  const start = now()
  let x = 0
  for (let i = 0; i < 3_000_000; i++) x = (x + i * 7) % 1_000_003
  if (x < 0) console.log(x)
  return now() - start
}
