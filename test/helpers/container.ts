import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { inject } from 'vitest'

/**
 * The container engine the container tests use, and the `run` arguments this machine needs, or
 * `undefined` (with a warning saying why) when podman is absent or cannot run a container.
 *
 * PTC_CONTAINER_RUNTIME names the OCI runtime (default: runc when installed at RUNC, else the
 * engine's own); empty means the engine's own. PTC_CONTAINER_ARGS adds run arguments,
 * space-separated; by default, with runc, the file and process limits (where the engine's
 * default limits exceed what the machine allows, starting any container fails).
 */
export function containerEngine(): Promise<ContainerEngine | undefined> {
  return (probed ??= probe())
}

/** podman, its OCI runtime and extra `run` arguments apart (as `container` options take them), and all of them as `run` arguments. */
export interface ContainerEngine {
  engine: string
  runtime: string | undefined
  args: string[]
  runArgs: string[]
}

const RUNC = '/usr/sbin/runc'
const RUNC_LIMITS = ['--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=16384:16384']
const PROBE_TIMEOUT_MS = 30_000

let probed: Promise<ContainerEngine | undefined> | undefined

async function probe(): Promise<ContainerEngine | undefined> {
  const engine = 'podman'
  const runtime = (process.env.PTC_CONTAINER_RUNTIME ?? (existsSync(RUNC) ? RUNC : '')) || undefined
  const extra = process.env.PTC_CONTAINER_ARGS
  const args = extra !== undefined ? extra.split(' ').filter(Boolean) : runtime !== undefined && path.basename(runtime) === 'runc' ? RUNC_LIMITS : []
  const runArgs = [...(runtime === undefined ? [] : ['--runtime', runtime]), ...args]
  // No image is needed to probe: the host's own root, behind a discarded overlay, is the container's.
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(engine, ['run', '--rm', ...runArgs, '--network', 'none', '--rootfs', '/:O', '/bin/true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: PROBE_TIMEOUT_MS })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', (error) => resolve({ code: null, stderr: error.message }))
    child.on('close', (code) => resolve({ code, stderr }))
  })
  if (result.code === 0) return { engine, runtime, args, runArgs }
  console.warn(`container tests skipped: ${engine} cannot run a container with ${JSON.stringify(runArgs)}: ${result.stderr.trim()}`)
  return undefined
}

/** The `container` options of a runtime on the container tier here: the image the test run built (test/setup/container-image.ts), or `undefined` where podman cannot run containers. */
export function containerOptions(): ContainerOptions | undefined {
  return inject('container')
}

export interface ContainerOptions {
  engine: string
  image: string
  runtime?: string
  args: string[]
}

declare module 'vitest' {
  export interface ProvidedContext {
    container: ContainerOptions | undefined
  }
}
