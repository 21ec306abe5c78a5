/**
 * One CPU group for every helper of this host. Where the kernel schedules each session as a
 * group of its own (autogroups), a helper's SCHED_IDLE class orders it only within its session,
 * and every helper starts sessions of its own: fifty spinning programs then weighed fifty times
 * the host, and held its event loop for half a second. In a cpu cgroup of their own (cgroup v1's
 * `cpu` hierarchy, or v2 where the host's cgroup lends its children the `cpu` controller), all
 * the helpers together weigh like one ordinary process, whatever their number: the host keeps at
 * least an equal share of a contended core, and the helpers share theirs among themselves.
 *
 * An equal share, not the `cpu.idle` class: a group that is idle loses to every ordinary process
 * of the machine, and a busy test runner or a host reading a large frame then starved programs
 * past their wall-clock deadlines (the same was seen with the least autogroup weight).
 *
 * The group is made per host process, where the host may make it (root, or a cgroup delegated
 * to its user), and removed when the last tier holding it stops, or the process exits; a group
 * left by a host that died is removed by the next host that starts in the same place.
 * Elsewhere helpers stay in the host's cgroup, as they always did.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync } from 'node:fs'
import path from 'node:path'
import { isMainThread } from 'node:worker_threads'
import { removeAbandoned } from './abandoned.js'

/** A host's group is named after its PID. */
const groupName = (pid: number) => `ptc-runtime-${pid}`
/** The host a group beside ours belongs to; a group that still holds a process cannot be removed. */
const groupOwner = (entry: string) => {
  const pid = /^ptc-runtime-(\d+)$/.exec(entry)?.[1]
  return pid === undefined ? undefined : Number(pid)
}

/** The cgroup that holds this host's cpu controller, as a directory of the mounted hierarchy. */
function hostCpuCgroup(): string | undefined {
  let memberships: string[]
  let mounts: string[]
  try {
    memberships = readFileSync('/proc/self/cgroup', 'utf8').split('\n')
    mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
  } catch {
    return undefined
  }
  // cgroup v1: the hierarchy whose controllers include `cpu` (often `cpu,cpuacct`).
  const v1 = memberships.map((line) => line.split(':')).find((fields) => fields.length >= 3 && fields[1]!.split(',').includes('cpu'))
  if (v1) return mountedAt(mounts, (type, options) => type === 'cgroup' && options.split(',').includes('cpu'), v1.slice(2).join(':'))
  const v2 = memberships.find((line) => line.startsWith('0::'))
  if (v2 === undefined) return undefined
  const directory = mountedAt(mounts, (type) => type === 'cgroup2', v2.slice(3))
  // v2 gives a child the controller only where the host's own cgroup already hands it down.
  return directory && readWords(path.join(directory, 'cgroup.subtree_control')).includes('cpu') ? directory : undefined
}

/**
 * Where `member` (a path in the hierarchy, as /proc/self/cgroup gives it) is mounted: the mount
 * point of the first mount `matches` accepts whose root contains it.
 */
function mountedAt(mounts: readonly string[], matches: (type: string, options: string) => boolean, member: string): string | undefined {
  for (const line of mounts) {
    // `id parent major:minor root mountpoint options [optional...] - type source superoptions`
    const [before, after] = line.split(' - ')
    if (after === undefined) continue
    const [type = '', , superOptions = ''] = after.split(' ')
    const [, , , root = '', mountPoint = ''] = before!.split(' ')
    if (!matches(type, superOptions)) continue
    const relative = path.posix.relative(root, member)
    if (relative.startsWith('..') || path.posix.isAbsolute(relative)) continue
    return path.join(unescapeMount(mountPoint), relative)
  }
  return undefined
}

/** mountinfo writes spaces, tabs, newlines and backslashes in paths as octal escapes. */
function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))
}

function readWords(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').trim().split(/\s+/)
  } catch {
    return []
  }
}

/** Where this host's group is made (`<host's cpu cgroup>/ptc-runtime-<pid>`); `undefined` if nowhere. */
let directory: string | undefined | null = null
let holders = 0
/** Which file of the group a helper joins through (`helperCpuGroup`): the hierarchy's version decides, once. */
let joinFile: 'tasks' | 'cgroup.procs' | undefined

function groupDirectory(): string | undefined {
  if (directory !== null) return directory
  const parent = process.platform === 'linux' ? hostCpuCgroup() : undefined
  directory = parent === undefined ? undefined : path.join(parent, groupName(process.pid))
  // Only the main thread's exit is the process's: a host in a worker thread shares the group.
  if (directory !== undefined && isMainThread) process.once('exit', removeGroup)
  return directory
}

function removeGroup(): void {
  try {
    if (directory) rmdirSync(directory)
  } catch {
    // a helper still dying holds it (the next host here removes it), or it is gone already
  }
}

/**
 * Holds this host's helper group for a tier between its start and its stop: the group is made
 * at the first helper's start and removed when the last hold is released (every helper has ended
 * by then). The first hold also removes the groups of hosts that are gone.
 */
export function holdCpuGroup(): () => void {
  const group = groupDirectory()
  if (holders++ === 0 && group !== undefined) removeAbandoned(path.dirname(group), groupOwner, rmdirSync)
  let held = true
  return () => {
    if (!held) return
    held = false
    if (--holders === 0) removeGroup()
  }
}

/**
 * The file of this host's helper group a helper joins it through, while a tier holds the group
 * (made if it is not there); `undefined` where the host cannot make one (no cpu controller it may
 * write, or not Linux). A helper's start-up shell writes `0` there, itself, before it becomes
 * bubblewrap or Node (memory-limit.ts), so everything it starts is in the group from its first
 * instruction.
 *
 * On cgroup v1 that file is `tasks`: the kernel moves a thread that moves itself through `tasks`
 * without its lock on every thread group, and the shell is one thread. Through `cgroup.procs`
 * the move takes that lock for writing, which waits for an RCU grace period unless another
 * move came moments before: 7-16 ms of a start after a pause, measured (2.3-6 through `tasks`,
 * the shell's own start included). cgroup v2 has no `tasks`, and moves a process only whole.
 */
export function helperCpuGroup(): string | undefined {
  const group = holders > 0 ? groupDirectory() : undefined
  if (group === undefined) return undefined
  try {
    mkdirSync(group)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EEXIST') {
      // Not ours to make (no permission, a read-only hierarchy): no need to ask again.
      if (code !== 'ENOENT') directory = undefined
      return undefined
    }
  }
  // A new group's weight is the kernel's default, that of one ordinary process (v1 `cpu.shares`
  // 1024, v2 `cpu.weight` 100): nothing to write.
  joinFile ??= existsSync(path.join(group, 'tasks')) ? 'tasks' : 'cgroup.procs'
  return path.join(group, joinFile)
}
