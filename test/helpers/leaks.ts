import { readdirSync, readlinkSync } from 'node:fs'
import { childProcesses, threadCount } from './processes.mjs'
import { setTimeout as sleep } from 'node:timers/promises'

export { childProcesses, threadCount }

/**
 * Whether a descriptor leads to a file without a name (`O_TMPFILE`, which Linux shows as
 * `<directory>/#<inode> (deleted)`): the runtime keeps those for the process's life, a startup
 * snapshot per heap size (src/host/environments/process/helper-snapshot.ts) and Python's
 * snapshot (src/python/snapshot.ts). Not a leak.
 */
export function isUnnamedFile(target: string): boolean {
  return /\/#\d+ \(deleted\)$/.test(target)
}

/** Open file descriptors of this process, but unnamed files'. */
export function openDescriptors(): number {
  let count = 0
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (!isUnnamedFile(readlinkSync(`/proc/self/fd/${fd}`))) count++
    } catch {
      // closed while we looked (the listing's own descriptor, for one)
    }
  }
  return count
}

export interface ResourceSnapshot {
  threads: number
  children: number[]
  descriptors: number
}

/**
 * Takes a baseline after waking libuv's thread pool and starting one worker (both open
 * descriptors and threads lazily, once per process, which would otherwise look like leaks).
 */
export async function resourceBaseline(): Promise<ResourceSnapshot> {
  await Promise.all(Array.from({ length: 8 }, () => import('node:fs/promises').then((fs) => fs.stat('/'))))
  const { Worker } = await import('node:worker_threads')
  await new Promise((resolve) => new Worker('', { eval: true }).once('exit', resolve))
  return { threads: threadCount(), children: childProcesses(), descriptors: openDescriptors() }
}

/** Resources now in excess of the baseline, after giving exits a moment to be reaped. */
export async function leakedSince(baseline: ResourceSnapshot): Promise<{ threads: number; children: number[]; descriptors: number }> {
  for (let attempt = 0; ; attempt++) {
    const leaked = {
      threads: threadCount() - baseline.threads,
      children: childProcesses().filter((pid) => !baseline.children.includes(pid)),
      descriptors: openDescriptors() - baseline.descriptors,
    }
    const clean = leaked.threads <= 0 && leaked.children.length === 0 && leaked.descriptors <= 0
    if (clean || attempt === 40) return clean ? { threads: 0, children: [], descriptors: 0 } : leaked
    await sleep(50)
  }
}
