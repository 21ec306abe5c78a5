/**
 * bubblewrap: finding the binary, the arguments that confine a helper process, and a cached
 * start-up probe.
 */
import { execFile } from 'node:child_process'
import { accessSync, constants, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import type { SandboxExecutionPolicy } from '../../seam/types.js'
import { repositoryMetadata } from './repositories.js'
import { RUNTIME_PATHS } from './runtime-files.js'

/**
 * Flags every confined helper gets. The host file system is visible read-only; `/dev` and
 * `/proc` are fresh; the PID namespace hides every host process and dies with its first
 * process, taking every descendant along; `--new-session` keeps the program off the host's
 * terminal.
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
  '--unshare-pid', '--die-with-parent', '--new-session',
]

const PROBE_TIMEOUT_MS = 10_000

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * The absolute path of bubblewrap: `configured` itself when it is a path, otherwise the first
 * executable of that name on the host's PATH. `undefined` when there is none.
 */
export function locateBwrap(configured: string, searchPath = process.env.PATH ?? ''): string | undefined {
  if (configured.includes('/')) return isExecutableFile(configured) ? configured : undefined
  for (const directory of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(directory)) continue
    const candidate = path.join(directory, configured)
    if (isExecutableFile(candidate)) return candidate
  }
  return undefined
}

/** Whether `file` is `top` or lies beneath it. */
const within = (file: string, top: string) => file === top || file.startsWith(`${top}/`)

function real(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    return file
  }
}

/** Host places a mode hides behind a private tmpfs. */
function privatePlaces(policy: SandboxExecutionPolicy): string[] {
  return policy.mode === 'workspace-write' ? ['/tmp'] : []
}

export interface HelperConfinement {
  policy: SandboxExecutionPolicy
  /** The run's working directory (validated to exist). */
  cwd: string
  /** Files the helper runs from (the Node executable, this package and its dependencies). */
  runtimePaths: readonly string[]
}

/**
 * bwrap arguments (before `--` and the command) for a helper under `policy`. Later mounts win
 * over earlier ones at the same place, so the order is the policy:
 *
 * 1. the host file system, read-only, with private places (a tmpfs discarded with the helper)
 *    hiding what the host keeps there: `/tmp` under `workspace-write`;
 * 2. what the run must see from a private place, read-only: the cwd and the workspace root;
 * 3. the writable roots, read-write (`workspace-write` only);
 * 4. the repository metadata (`.git`) found in a writable root, read-only again, unless a
 *    writable root names it (roots inside it are bound read-write once more);
 * 5. the runtime's own files, read-only, wherever they are: a program must not change what a
 *    later helper or the host runs, and the helper must find Node even in a private place.
 */
export function bwrapArguments({ policy, cwd, runtimePaths }: HelperConfinement): string[] {
  const args = [...BASE]
  const hidden = privatePlaces(policy)
  for (const place of hidden) args.push('--tmpfs', place)
  // Mounts inside a private place so far (destination -> source): what lies beneath one is visible.
  const mounts = new Map<string, string>()
  const isHidden = (file: string) => hidden.some((place) => within(file, place)) && ![...mounts.keys()].some((top) => within(file, top))
  const bind = (flag: '--bind' | '--ro-bind', source: string, destination = source) => {
    args.push(flag, source, destination)
    if (hidden.some((place) => within(destination, place))) mounts.set(destination, source)
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
  if (policy.mode === 'workspace-write') {
    const roots = [policy.workspaceRoot, ...(policy.writableRoots ?? [])]
    for (const root of roots) bind('--bind', root)
    const metadata = roots.flatMap(repositoryMetadata).filter((entry) => !roots.includes(entry))
    for (const entry of new Set(metadata)) bind('--ro-bind', entry)
    for (const root of roots) if (metadata.some((entry) => within(root, entry))) bind('--bind', root)
  }
  for (const file of runtimePaths) bind('--ro-bind', file)
  args.push('--chdir', cwd)
  return args
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
    const confinement = bwrapArguments({ policy: { mode: 'read-only', workspaceRoot: '/' }, cwd: '/', runtimePaths })
    const args = [...confinement, '--', process.execPath, '--version']
    probe = new Promise((resolve) => {
      execFile(bwrap, args, { env: {}, timeout: PROBE_TIMEOUT_MS, encoding: 'utf8' }, (error, _stdout, stderr) => {
        if (!error) return resolve(undefined)
        const detail = stderr.trim().split('\n').pop() || error.message
        resolve(`${bwrap} failed its start-up probe: ${detail}`)
      })
    })
    probes.set(bwrap, probe)
  }
  return probe
}
