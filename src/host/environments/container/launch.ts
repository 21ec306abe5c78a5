/**
 * What the container tier learns at start: the OCI runtime and the `run` arguments with which
 * the engine can run the image here, found by running a tiny real container with each candidate
 * (`node -e ''` under exactly an environment's arguments). Engines ask for more than some
 * machines allow: podman's default file limit exceeds the hard limit of a host that is itself
 * in a container, and runc then fails `error setting rlimit type 7: operation not permitted`;
 * the limits this process already holds are accepted everywhere.
 */
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { type ContainerRun, isDocker, removeArguments, runArguments } from './stream.js'
import { locateCommand } from '../../../system/commands.js'

/** The OCI runtime and extra `run` arguments an environment's container is started with. */
export interface ContainerLaunch {
  runtime: string | undefined
  args: string[]
}

/** What a probe runs in the image: a Node that starts and exits. */
const PROBE_COMMAND = ['/usr/local/bin/node', '-e', '']
/** A first container start may load the image from disk; a probe that takes longer has failed. */
const PROBE_TIMEOUT_MS = 60_000
const REMOVE_TIMEOUT_MS = 30_000
/** How much of an engine's complaint each failed attempt keeps. */
const COMPLAINT_CHARS = 300

/** The resource limits the container gets when the engine's defaults are refused, with the names /proc/self/limits gives them. */
const INHERITED_LIMITS: ReadonlyArray<[ulimit: string, limits: string]> = [
  ['nofile', 'Max open files'],
  ['nproc', 'Max processes'],
]

/**
 * Finds how to run `run.image` here: the configured runtime, or else gVisor's where installed,
 * the engine's own and the other OCI runtimes on PATH; each with the configured arguments, then
 * (unless they set limits themselves) with this process's own hard limits as the container's.
 * Rejects naming every attempt, the engine's words, and the options that choose for it.
 */
export async function findLaunch(run: Omit<ContainerRun, 'name' | 'runtime' | 'args'>, configured: { runtime?: string; args?: string[] }): Promise<ContainerLaunch> {
  const args = configured.args ?? []
  const limits = args.includes('--ulimit') ? [] : inheritedLimits()
  const attempts: ContainerLaunch[] = []
  for (const runtime of configured.runtime !== undefined ? [configured.runtime] : runtimeCandidates(run.engine)) {
    attempts.push({ runtime, args })
    if (limits.length > 0) attempts.push({ runtime, args: [...limits, ...args] })
  }
  const complaints: string[] = []
  for (const attempt of attempts) {
    const complaint = await probe({ ...run, ...attempt, name: `ptc-probe-${randomUUID()}` })
    if (complaint === undefined) return attempt
    complaints.push(`${describe(attempt)}: ${complaint}`)
  }
  const engine = path.basename(run.engine)
  throw new Error(
    `the container engine ${engine} cannot run a container here; tried ${complaints.join('; ')}. ` +
      `Set container.runtime to an OCI runtime that works here and container.args to the run arguments it needs ` +
      `(such as --ulimit nofile=N:N --ulimit nproc=N:N, at most this host's hard limits), checked by hand with ` +
      `\`${engine} run --rm [--runtime …] [args…] ${run.image} /usr/local/bin/node -e ''\``,
  )
}

/** gVisor's runsc first where installed (a path for podman, the name docker registers it under), then the engine's own, then the others installed. */
function runtimeCandidates(engine: string): Array<string | undefined> {
  const runsc = locateCommand('runsc')
  if (isDocker(engine)) return [...(runsc ? ['runsc'] : []), undefined]
  const others = ['runc', 'crun'].map((name) => locateCommand(name)).filter((found) => found !== undefined)
  return [...(runsc ? [runsc] : []), undefined, ...others]
}

/**
 * `--ulimit` arguments giving the container this process's own hard limits, which a runtime may
 * keep without privilege; a process limit no higher than the kernel's number of PIDs, since the
 * engine's own process may hold no more than that (podman here: refused above pid_max).
 */
function inheritedLimits(): string[] {
  let table: string
  try {
    table = readFileSync('/proc/self/limits', 'utf8')
  } catch {
    return [] // not Linux: the engine runs elsewhere (a VM) and its own defaults apply there
  }
  const pids = Number(readOptional('/proc/sys/kernel/pid_max')) || Number.POSITIVE_INFINITY
  return INHERITED_LIMITS.flatMap(([ulimit, name]) => {
    const hard = new RegExp(`^${name}\\s+\\S+\\s+(\\d+)`, 'm').exec(table)?.[1]
    if (hard === undefined) return []
    const value = ulimit === 'nproc' ? Math.min(Number(hard), pids) : Number(hard)
    return ['--ulimit', `${ulimit}=${value}:${value}`]
  })
}

function readOptional(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

function describe({ runtime, args }: ContainerLaunch): string {
  return `${runtime === undefined ? "the engine's own runtime" : `the runtime ${runtime}`}${args.length > 0 ? ` with ${args.join(' ')}` : ''}`
}

/** Runs one probe container; undefined when it ran, else the engine's last words. */
function probe(run: ContainerRun): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(run.engine, runArguments(run, PROBE_COMMAND), { cwd: run.cwd, timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (!error) return resolve(undefined)
      // A probe that timed out may have left its container; --rm removes the others.
      execFile(run.engine, removeArguments(run.engine, run.name), { cwd: run.cwd, timeout: REMOVE_TIMEOUT_MS }, () => {
        const words = String(stderr).trim().split('\n').slice(-2).join(' ') || error.message
        resolve(words.slice(-COMPLAINT_CHARS))
      })
    })
  })
}
