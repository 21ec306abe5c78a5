/**
 * bubblewrap: finding the binary, the arguments that confine a helper process, and a cached
 * start-up probe.
 */
import { spawn } from 'node:child_process'
import { closeSync, constants, fstatSync, openSync, readlinkSync } from 'node:fs'
import path from 'node:path'
import type { Readable, Writable } from 'node:stream'
import type { SandboxExecutionPolicy } from '../../seam/types.js'
import { WRAPPER_INPUT_FD } from '../../protocol/frames.js'
import { parentsWithin } from './parents.js'
import { privatePlaces, real, within } from './places.js'
import { repositoryMetadata } from './repositories.js'
import { RUNTIME_PATHS } from './runtime-files.js'
import { seccompFilter } from './seccomp.js'

/**
 * Flags every confined helper gets. The host file system is visible read-only; `/dev` and
 * `/proc` are fresh; the PID namespace hides every host process and dies with its first
 * process, taking every descendant along; the IPC namespace keeps System V objects and POSIX
 * message queues private (a program could otherwise leave a channel to other conversations,
 * or remove a host service's); `--new-session` keeps the program off the host's terminal; the
 * seccomp filter (read from the helper's descriptor WRAPPER_INPUT_FD) refuses unix sockets.
 *
 * The user namespace with all capabilities dropped matters when the host runs as root:
 * without it the program keeps CAP_SYS_ADMIN and `mount -o remount,rw /` undoes the
 * read-only view (measured on this machine). `--disable-userns` stops it from regaining
 * capabilities in a nested namespace.
 */
const BASE = [
  '--ro-bind', '/', '/',
  '--dev', '/dev',
  '--proc', '/proc',
  '--unshare-user', '--disable-userns', '--cap-drop', 'ALL',
  '--unshare-pid', '--unshare-ipc', '--die-with-parent', '--new-session',
  '--seccomp', String(WRAPPER_INPUT_FD),
]

const PROBE_TIMEOUT_MS = 10_000

/**
 * Flags after every mount. `/proc` read-only: a program cannot lower its helper's
 * `oom_score_adj` (the kernel lets an unprivileged process lower it again down to where it
 * started) nor write any other process setting there; reading is unchanged.
 */
const LAST = ['--remount-ro', '/proc']

/**
 * Flags of a helper no policy confines, when bubblewrap is at hand: the host's files, devices
 * and network as they are, but a PID namespace of its own, so the host's processes (and through
 * /proc, their memory and environment) are out of the program's sight and out of reach of its
 * signals, and every descendant dies with the helper; and no capabilities in the host's user
 * namespace, so a host running as root does not lend the program root's privileges.
 */
export function namespaceArguments(cwd: string): string[] {
  return [
    '--dev-bind', '/', '/',
    '--proc', '/proc',
    '--unshare-user', '--disable-userns', '--cap-drop', 'ALL',
    '--unshare-pid', '--die-with-parent', '--new-session',
    '--chdir', cwd,
    ...LAST,
  ]
}

export interface HelperConfinement {
  policy: SandboxExecutionPolicy
  /** The run's working directory (validated to exist). */
  cwd: string
  /** Files the helper runs from (the Node executable, this package's build): always bound read-only. */
  runtimePaths: readonly string[]
  /**
   * Files no program may change but the helper never loads (the packages the host loads): bound
   * read-only only where a writable root holds them or lies inside them. Elsewhere `/` already
   * shows them read-only, or a private place hides them, and each needless mount costs the start
   * (a read-only bind took 0.25-0.3 ms of a bare bubblewrap start, measured with a hundred of them).
   */
  protectedPaths?: readonly string[]
  /**
   * The environment's private scratch directory, when its policy has one: an empty tmpfs at
   * this path (which exists on the host, empty), writable whatever the mode.
   */
  scratch?: string
  /** The size of each writable tmpfs (`/tmp`, `/dev/shm`, the scratch directory); unbounded when absent. */
  tmpfsBytes?: number
  /** Where the host runs (hidden from the program); `process.cwd()` by default. */
  hostCwd?: string
  /**
   * The repository metadata (`.git`) in the writable roots, as this start found it
   * (`repositoryMetadata`); looked for now when absent. A caller that keeps the wrapper under
   * what it found passes that very list: a root read twice can differ between the readings.
   */
  metadata?: readonly string[]
}

/**
 * bwrap arguments (before `--` and the command) for a helper under `policy`. Later mounts win
 * over earlier ones at the same place, so the order is the policy:
 *
 * 1. the host file system, read-only, with private places (an empty tmpfs discarded with the
 *    helper) hiding what the host keeps there: `/tmp` (writable, bounded), `/var/tmp`, `/run`,
 *    the user's runtime directory, the user's home and the host's working directory;
 * 2. a bounded private `/dev/shm`, and the environment's scratch directory, when it has one;
 * 3. what the run must see from a private place, read-only: the cwd, the workspace root, the
 *    readable roots and the resolver configuration (often a link into `/run`);
 * 4. the writable roots, read-write (`workspace-write` only), then each directory between a root
 *    and a file of step 6 inside it, onto itself: a mount point the kernel refuses to rename or
 *    remove (`EBUSY`), so a program cannot move `node_modules` aside and put its own package
 *    where a later helper, or the host's next start, loads it from (binding is by path);
 * 5. the repository metadata (`.git`) found in a writable root, read-only again, through
 *    descriptors the host opened (`PINNED_FD` onward), unless a writable root names it
 *    (roots inside it are bound read-write once more);
 * 6. the runtime's own files, read-only, wherever they are: a program must not change what a
 *    later helper or the host runs, and the helper must find Node even in a private place; the
 *    host's packages only where a writable root would expose them;
 * 7. read-only again: the hiding places other than `/tmp`, `/dev` (bubblewrap's own tmpfs,
 *    which would otherwise take files of any size) and `/proc`.
 */
export function bwrapArguments({ policy, cwd, runtimePaths, protectedPaths = [], scratch, tmpfsBytes, hostCwd, metadata: found }: HelperConfinement): { args: string[]; pinned: string[] } {
  const args = [...BASE]
  /** What is bound by descriptor (openPinned), in order from PINNED_FD: paths a program may swap as a helper starts. */
  const pinned: string[] = []
  if (policy.network !== 'host') args.push('--unshare-net')
  const size = tmpfsBytes === undefined ? [] : ['--size', String(tmpfsBytes)]
  const places = privatePlaces(hostCwd)
  const hidden = places.map((place) => place.path)
  for (const place of places) args.push(...(place.writable ? size : []), '--tmpfs', place.path)
  args.push(...size, '--tmpfs', '/dev/shm')
  // Mounts inside a private place so far (destination -> source): what lies beneath one is visible.
  const mounts = new Map<string, string>()
  if (scratch !== undefined) {
    args.push(...size, '--tmpfs', scratch)
    mounts.set(scratch, scratch)
  }
  const isHidden = (file: string) => hidden.some((place) => within(file, place)) && ![...mounts.keys()].some((top) => within(file, top))
  const bound: string[] = []
  const bind = (flag: '--bind' | '--ro-bind', source: string, destination = source) => {
    args.push(flag, source, destination)
    bound.push(destination)
    if (hidden.some((place) => within(destination, place))) mounts.set(destination, source)
  }
  // Bound where it was found, through a descriptor opened then: a symlink swapped in on its path
  // as the helper starts cannot redirect it (bubblewrap follows symlinks in what it binds by path).
  const pin = (file: string) => {
    args.push('--ro-bind-fd', String(PINNED_FD + pinned.length), file)
    pinned.push(file)
    bound.push(file)
    if (hidden.some((place) => within(file, place))) mounts.set(file, file)
  }
  // Sources are bound at their real paths (the kernel confines by real path). A path given
  // through a symlink is bound as given too, unless the symlink itself is visible in a view
  // of the host's directory, where it already leads to the real mount.
  const symlinkVisible = (given: string) =>
    !hidden.some((place) => within(given, place)) || [...mounts].some(([top, source]) => top === source && within(given, top))
  const reveal = (given: string) => {
    const resolved = real(given)
    if (isHidden(resolved)) bind('--ro-bind', resolved)
    if (given !== resolved && isHidden(given) && !symlinkVisible(given)) bind('--ro-bind', resolved, given)
  }
  reveal(cwd)
  reveal(policy.workspaceRoot)
  for (const root of policy.readableRoots ?? []) reveal(root)
  reveal('/etc/resolv.conf')
  const roots = writableRoots(policy, scratch)
  const exposed = protectedPaths.filter((file) => roots.some((root) => within(file, root) || within(root, file)))
  if (roots.length > 0) {
    // The parents go before the metadata: one bound after a `.git` beneath it would make that writable again.
    const parents = parentsWithin([...runtimePaths, ...exposed], roots)
    const bindWritable = (list: string[]) => {
      for (const root of list) bind('--bind', root)
      for (const parent of parents) if (list.some((root) => within(parent, root))) bind('--bind', parent)
    }
    bindWritable(roots)
    // A program can make a `.git` (or a directory holding one) and swap it for a symlink.
    const metadata = [...new Set((found ?? roots.flatMap(repositoryMetadata)).filter((entry) => !roots.includes(entry)))]
    for (const entry of metadata) pin(entry)
    bindWritable(roots.filter((root) => metadata.some((entry) => within(root, entry))))
  }
  for (const file of runtimePaths) bind('--ro-bind', file)
  for (const file of exposed) bind('--ro-bind', file)
  args.push('--chdir', cwd)
  // A place a later bind covered (the host's cwd inside the runtime's package) is no mount point any more.
  for (const place of places) {
    if (!place.writable && !bound.some((destination) => within(place.path, destination))) args.push('--remount-ro', place.path)
  }
  args.push('--remount-ro', '/dev', ...LAST)
  return { args, pinned }
}

/** How to start a confined helper: bubblewrap, its arguments, the seccomp filter it reads, and the roots to check. */
export interface HelperWrapper {
  command: string
  args: string[]
  /** Bytes bubblewrap reads from WRAPPER_INPUT_FD (the seccomp filter). */
  input: Buffer
  /** The writable roots it binds, checked from outside before each run. */
  roots: string[]
  /** Its writable private tmpfs mounts (paths inside), whose contents count against the memory budget. */
  tmpfs: string[]
  /** What bubblewrap binds by descriptor, in order from PINNED_FD: opened by openPinned as the helper is spawned. */
  pinned: string[]
}

/** The roots a helper under `policy` binds read-write: none but in `workspace-write`, and never its scratch directory (a tmpfs of its own). */
export function writableRoots(policy: SandboxExecutionPolicy, scratch: string | undefined): string[] {
  return policy.mode === 'workspace-write' ? [policy.workspaceRoot, ...(policy.writableRoots ?? [])].filter((root) => root !== scratch) : []
}

/** The first descriptor of the paths a helper's bubblewrap binds by descriptor. */
export const PINNED_FD = 8

/** Linux's `O_PATH` (the same on x86 and arm64), which Node's `fs.constants` does not name. */
const O_PATH = 0o10000000

/**
 * Descriptors of `paths` (a wrapper's `pinned`), each checked to lead to a directory or file at
 * exactly that path, with no symlink on the way; the caller closes them once the helper is
 * spawned. Throws, naming the path, when one no longer does: the helper is then not started.
 */
export function openPinned(paths: readonly string[]): number[] {
  const descriptors: number[] = []
  try {
    for (const file of paths) {
      const fd = openSync(file, O_PATH | constants.O_NOFOLLOW)
      descriptors.push(fd)
      const kind = fstatSync(fd).mode & constants.S_IFMT
      if ((kind !== constants.S_IFDIR && kind !== constants.S_IFREG) || readlinkSync(`/proc/self/fd/${fd}`) !== file) {
        throw new Error(`${file} changed as the helper started (a symlink on its path)`)
      }
    }
    return descriptors
  } catch (error) {
    for (const fd of descriptors) closeSync(fd)
    throw error
  }
}

export function helperWrapper(bwrap: string, confinement: HelperConfinement): HelperWrapper {
  const { policy, scratch } = confinement
  const roots = writableRoots(policy, scratch)
  const places = privatePlaces(confinement.hostCwd).filter((place) => place.writable).map((place) => place.path)
  const tmpfs = [...places, '/dev/shm', ...(scratch === undefined ? [] : [scratch])]
  const { args, pinned } = bwrapArguments(confinement)
  return { command: bwrap, args, input: seccompFilter(), roots, tmpfs, pinned }
}

const probes = new Map<string, Promise<string | undefined>>()

/**
 * Whether `bwrap` can confine a process here: it runs Node under the same flags the helpers
 * get. Resolves `undefined` on success or the reason it failed. Cached per binary for the life
 * of the process: the answer depends on the kernel and the machine, not on the run.
 */
export function probeBwrap(bwrap: string, runtimePaths: readonly string[] = RUNTIME_PATHS): Promise<string | undefined> {
  let probe = probes.get(bwrap)
  if (!probe) {
    probe = new Promise((resolve) => {
      let wrapper: ReturnType<typeof helperWrapper>
      try {
        wrapper = helperWrapper(bwrap, { policy: { mode: 'read-only', workspaceRoot: '/' }, cwd: '/', runtimePaths })
      } catch (error) {
        return resolve(`confinement is not possible here: ${(error as Error).message}`)
      }
      const stdio = Array.from({ length: WRAPPER_INPUT_FD + 1 }, (_, fd) => (fd === 2 || fd === WRAPPER_INPUT_FD ? 'pipe' : 'ignore') as 'pipe' | 'ignore')
      const child = spawn(bwrap, [...wrapper.args, '--', process.execPath, '--version'], { env: {}, stdio, timeout: PROBE_TIMEOUT_MS })
      const input = child.stdio[WRAPPER_INPUT_FD] as Writable
      input.on('error', () => undefined) // a bwrap that exits without reading it
      input.end(wrapper.input)
      let stderr = ''
      ;(child.stderr as Readable).setEncoding('utf8').on('data', (text: string) => (stderr += text))
      child.on('error', (error) => resolve(`${bwrap} failed its start-up probe: ${error.message}`))
      child.on('close', (code, signal) => {
        if (code === 0) return resolve(undefined)
        const detail = stderr.trim().split('\n').pop() || (signal ? `killed by ${signal}` : `exit code ${code}`)
        resolve(`${bwrap} failed its start-up probe: ${detail}`)
      })
    })
    probes.set(bwrap, probe)
  }
  return probe
}
