import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { inject } from 'vitest'

/**
 * The container engine the container tests use, and the `run` arguments with which raw `podman
 * run` commands of the tests work here, or `undefined` (with a warning saying why) when podman
 * is absent or cannot run a container.
 *
 * The runtimes the tests start find their OCI runtime and limits themselves, as a deployment's
 * do (src/host/environments/container/launch.ts): `tierOptions` are set only by PTC_CONTAINER_RUNTIME (the
 * OCI runtime; empty means the engine's own) and PTC_CONTAINER_ARGS (more run arguments,
 * space-separated), to try a configuration by hand. The raw runs use them too, and by default
 * runc, where installed, with file and process limits the machine allows.
 */
export function containerEngine(): Promise<ContainerEngine | undefined> {
  return (probed ??= probe())
}

/** podman, its `run` arguments for raw runs, and the `container` options the tests' runtimes get beyond engine and image. */
export interface ContainerEngine {
  engine: string
  runArgs: string[]
  tierOptions: { runtime?: string; args?: string[] }
}

const RUNC = '/usr/sbin/runc'
const RUNC_LIMITS = ['--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=16384:16384']
const PROBE_TIMEOUT_MS = 30_000

let probed: Promise<ContainerEngine | undefined> | undefined

async function probe(): Promise<ContainerEngine | undefined> {
  const engine = 'podman'
  const { PTC_CONTAINER_RUNTIME: chosenRuntime, PTC_CONTAINER_ARGS: chosenArgs } = process.env
  const tierOptions = {
    ...(chosenRuntime !== undefined ? { runtime: chosenRuntime || undefined } : {}),
    ...(chosenArgs !== undefined ? { args: chosenArgs.split(' ').filter(Boolean) } : {}),
  }
  const runtime = (chosenRuntime ?? (existsSync(RUNC) ? RUNC : '')) || undefined
  const args = chosenArgs !== undefined ? tierOptions.args! : runtime !== undefined && path.basename(runtime) === 'runc' ? RUNC_LIMITS : []
  const runArgs = [...(runtime === undefined ? [] : ['--runtime', runtime]), ...args]
  // No image is needed to probe: the host's own root, behind a discarded overlay, is the container's.
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(engine, ['run', '--rm', ...runArgs, '--network', 'none', '--rootfs', '/:O', '/bin/true'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: PROBE_TIMEOUT_MS })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', (error) => resolve({ code: null, stderr: error.message }))
    child.on('close', (code) => resolve({ code, stderr }))
  })
  if (result.code === 0) return { engine, runArgs, tierOptions }
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
  args?: string[]
}

declare module 'vitest' {
  export interface ProvidedContext {
    container: ContainerOptions | undefined
  }
}
