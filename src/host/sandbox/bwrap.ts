/**
 * bubblewrap: finding the binary, the arguments that confine a helper process, and a cached
 * start-up probe. Measurements behind these choices are in research/sandbox.md.
 */
import { execFile } from 'node:child_process'
import { accessSync, constants, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SandboxExecutionPolicy } from '../../seam/types.js'

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

/** What a confined helper must be able to read: the Node binary and this package (dist/..). */
export const RUNTIME_PATHS: readonly string[] = [process.execPath, path.dirname(path.dirname(fileURLToPath(import.meta.url)))]

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

const underTmp = (file: string) => file === '/tmp' || file.startsWith('/tmp/')

function real(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    return file
  }
}

export interface HelperConfinement {
  policy: SandboxExecutionPolicy
  /** The run's working directory (validated to exist). */
  cwd: string
  /** Files the helper needs to start: the Node binary and the runtime's package directory. */
  runtimePaths: readonly string[]
}

/**
 * bwrap arguments (before `--` and the command) for a helper under `policy`.
 *
 * `read-only` shows the whole host file system read-only, `/tmp` included, so the program
 * sees the host's files exactly as they are and can change none of them.
 *
 * `workspace-write` adds a private `/tmp` (a tmpfs discarded with the helper) and binds the
 * workspace root and writable roots read-write. The tmpfs hides the host's `/tmp`, so what the
 * helper needs from there comes back read-only first: the runtime's own files (at their top
 * `/tmp` directory, so hoisted dependencies resolve) and the cwd. The writable binds come
 * last, so they win over a read-only view of the same place.
 */
export function bwrapArguments({ policy, cwd, runtimePaths }: HelperConfinement): string[] {
  const args = [...BASE]
  if (policy.mode === 'workspace-write') {
    args.push('--tmpfs', '/tmp')
    // Mounts under the tmpfs so far (destination -> source): what lies beneath one is visible.
    const mounts = new Map<string, string>()
    const within = (file: string, top: string) => file.startsWith(`${top}/`)
    const hidden = (file: string) => underTmp(file) && ![...mounts.keys()].some((top) => file === top || within(file, top))
    const bind = (flag: '--bind' | '--ro-bind', source: string, destination = source) => {
      args.push(flag, source, destination)
      if (underTmp(destination)) mounts.set(destination, source)
    }
    for (const file of runtimePaths.map(real).filter(underTmp)) {
      const top = file.split('/').slice(0, 3).join('/')
      if (hidden(top)) bind('--ro-bind', top)
    }
    // Sources are bound at their real paths (the kernel confines by real path). A path given
    // through a symlink is bound as given too, unless the symlink itself is visible in a view
    // of the host's directory, where it already leads to the real mount.
    const symlinkVisible = (given: string) =>
      !underTmp(given) || [...mounts].some(([top, source]) => top === source && within(given, top))
    const expose = (flag: '--bind' | '--ro-bind', given: string) => {
      const resolved = real(given)
      if (flag === '--bind' || hidden(resolved)) bind(flag, resolved)
      if (given !== resolved && (flag === '--bind' || hidden(given)) && !symlinkVisible(given)) bind(flag, resolved, given)
    }
    expose('--ro-bind', cwd)
    for (const root of [policy.workspaceRoot, ...(policy.writableRoots ?? [])]) expose('--bind', root)
  }
  args.push('--chdir', cwd)
  return args
}

const probes = new Map<string, Promise<string | undefined>>()

/**
 * Whether `bwrap` can confine a process here: it runs Node under the same flags the helpers
 * get. Resolves `undefined` on success or the reason it failed. Cached per binary for the life
 * of the process: the answer depends on the kernel and the machine, not on the run.
 */
export function probeBwrap(bwrap: string): Promise<string | undefined> {
  let probe = probes.get(bwrap)
  if (!probe) {
    const args = [...BASE, '--tmpfs', '/tmp', '--chdir', '/', '--', process.execPath, '--version']
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
