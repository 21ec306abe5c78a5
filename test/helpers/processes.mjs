// Probes of this process through /proc, shared by the leak accounting (TypeScript tests) and
// the soak script (plain Node), so both count threads and children the same way.
import { readdirSync, readFileSync } from 'node:fs'

/** OS threads of this process: every live Worker is one. */
export function threadCount() {
  return readdirSync('/proc/self/task').length
}

/** Direct children of this process whose state letter passes `keep` ('Z' is exited, unreaped). */
function directChildren(keep) {
  const children = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[1]) === process.pid && keep(fields[0])) children.push(Number(entry))
    } catch {
      // exited while we looked
    }
  }
  return children
}

/** Live direct child processes of this process. */
export function childProcesses() {
  return directChildren((state) => state !== 'Z')
}

/**
 * Direct children that have exited but were never reaped: each one is a process-table entry
 * held until the host exits.
 */
export function zombieChildren() {
  return directChildren((state) => state === 'Z')
}
