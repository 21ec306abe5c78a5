/**
 * A container's busy time as the host's kernel counts it: the CPU account of the container's
 * cgroup, which holds every process of the container (an orphan that left the helper's tree
 * included) and which no process inside can leave or reset. Read from the host, so a program
 * that stops or floods the stream entry (the same user as the program) cannot make a held run
 * look idle. Where the host cannot see the container (an engine in a VM, another PID
 * namespace), there is no account and the entry's report stands.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpuMsOfTree } from '../../../system/process-sweep.js'

const INSPECT_TIMEOUT_MS = 10_000

/** Reads a container's CPU time in ms; `undefined` once it cannot be read. */
export type CpuAccount = () => number | undefined

/**
 * The account of the running container `name`: the engine says its init's host PID and its id,
 * and the PID counts only if its cgroup names that id (a PID of another namespace would not).
 * Then the cgroup's own account (v1 `cpuacct.usage`, v2 `cpu.stat`), or else the CPU of the
 * init's process tree, where every orphan of the container ends up. Undefined when the engine
 * or the host cannot tell.
 */
export function containerCpuAccount(engine: string, name: string, cwd: string): Promise<CpuAccount | undefined> {
  return new Promise((resolve) => {
    execFile(engine, ['inspect', '--format', '{{.State.Pid}} {{.Id}}', name], { cwd, timeout: INSPECT_TIMEOUT_MS }, (error, stdout) => {
      const [pid, id] = String(stdout).trim().split(' ')
      if (error || !pid || !/^\d+$/.test(pid) || pid === '0' || !id) return resolve(undefined)
      resolve(accountOf(Number(pid), id))
    })
  })
}

function accountOf(pid: number, id: string): CpuAccount | undefined {
  let memberships: string
  try {
    memberships = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
  } catch {
    return undefined
  }
  if (!memberships.includes(id)) return undefined
  const cgroup = cgroupAccount(memberships)
  if (cgroup) return cgroup
  return () => cpuMsOfTree(pid)
}

/** The cgroup's CPU account, where this host mounts the hierarchy that keeps one. */
function cgroupAccount(memberships: string): CpuAccount | undefined {
  const mounts = readMounts()
  for (const line of memberships.split('\n')) {
    const [, controllers, place] = line.split(':')
    if (place === undefined) continue
    const v1 = controllers!.split(',').includes('cpuacct') ? mounts.cpuacct : undefined
    const v2 = controllers === '' ? mounts.unified : undefined
    const account: CpuAccount | undefined = v1
      ? () => nanosecondsToMs(readFileSync(`${v1}${place}/cpuacct.usage`, 'utf8'))
      : v2
        ? () => microsecondsToMs(/^usage_usec (\d+)$/m.exec(readFileSync(`${v2}${place}/cpu.stat`, 'utf8'))?.[1])
        : undefined
    if (account && readable(account)) return guarded(account)
  }
  return undefined
}

/** Where this host mounts cgroup v1's cpuacct hierarchy and cgroup v2. */
function readMounts(): { cpuacct?: string; unified?: string } {
  const found: { cpuacct?: string; unified?: string } = {}
  let table = ''
  try {
    table = readFileSync('/proc/self/mountinfo', 'utf8')
  } catch {
    return found
  }
  for (const line of table.split('\n')) {
    // mountinfo(5): fields, then ' - ', then the file system type, source and super options.
    const [before, after] = line.split(' - ')
    if (!before || !after) continue
    const mountPoint = before.split(' ')[4]
    const [type, , options] = after.split(' ')
    if (type === 'cgroup2') found.unified ??= mountPoint
    if (type === 'cgroup' && options?.split(',').includes('cpuacct')) found.cpuacct ??= mountPoint
  }
  return found
}

function readable(account: CpuAccount): boolean {
  try {
    return Number.isFinite(account())
  } catch {
    return false
  }
}

/** Once the container is gone its cgroup is too: nothing more to count. */
function guarded(account: CpuAccount): CpuAccount {
  return () => {
    try {
      return account()
    } catch {
      return undefined
    }
  }
}

function nanosecondsToMs(text: string): number {
  return Number(text.trim()) / 1e6
}

function microsecondsToMs(text: string | undefined): number {
  return Number(text) / 1e3
}
