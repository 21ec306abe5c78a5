/**
 * Whether the kernel orders helpers behind the host. Helpers move themselves to the SCHED_IDLE
 * class where `chrt` is installed (memory-limit.ts), and a SCHED_IDLE thread runs only when no
 * ordinary thread wants the CPU. But where the kernel schedules sessions as groups (autogroups),
 * a thread's class orders it only within its session, and every session weighs as one ordinary
 * process: each helper starts sessions of its own, so there a hundred dying helpers take a
 * hundred shares of the CPU against the host's one (measured: 300 torn down at once held the
 * host's event loop for up to 260 ms).
 */
import { readFileSync } from 'node:fs'
import { locateCommand } from './commands.js'

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

/**
 * Whether autogroups weigh this process's session: they are enabled, and the process is in the
 * root of the cpu controller (autogroups apply only there). A cpu cgroup of its own, in cgroup
 * v1 or v2, puts the host and its helpers in a group that the kernel weighs as a whole.
 */
export function autogroupsApply(): boolean {
  if (read('/proc/sys/kernel/sched_autogroup_enabled')?.trim() !== '1') return false
  for (const line of (read('/proc/self/cgroup') ?? '').split('\n')) {
    const [, controllers = '', place = '/'] = line.split(':')
    if (place === '/') continue
    if (controllers.split(',').includes('cpu')) return false // v1: a cpu cgroup of its own
    if (controllers === '' && read(`/sys/fs/cgroup${place}/cpu.weight`) !== undefined) return false // v2, cpu enabled
  }
  return true
}

/** Helpers run in the SCHED_IDLE class and that class orders them behind the host. */
export const HOST_FIRST = process.platform === 'linux' && (locateCommand('chrt') ?? locateCommand('chrt', '/usr/bin:/bin')) !== undefined && !autogroupsApply()
