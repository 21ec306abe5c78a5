/**
 * bubblewrap: finding the binary, the arguments that confine a helper process, and a cached
 * start-up probe. Measurements behind these choices are in research/sandbox.md.
 */
import { execFile } from 'node:child_process'
import { accessSync, constants, realpathSync, statSync } from 'node:fs'
import path from 'node:path'
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

/** Bind `source` at its real path and, when that differs, at the path as given. */
function bind(flag: '--bind' | '--ro-bind', source: string): string[] {
  const resolved = real(source)
  const args = [flag, resolved, resolved]
  if (resolved !== source) args.push(flag, resolved, source)
  return args
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
    for (const file of runtimePaths.map(real).filter(underTmp)) {
      const top = file.split('/').slice(0, 3).join('/')
      args.push('--ro-bind', top, top)
    }
    if (underTmp(real(cwd))) args.push(...bind('--ro-bind', cwd))
    for (const root of [policy.workspaceRoot, ...(policy.writableRoots ?? [])]) args.push(...bind('--bind', root))
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
