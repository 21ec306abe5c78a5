/**
 * `isolation: 'container'`: every environment is a container of its own, run by podman or
 * docker from the package's image (`ptc-runtime-image`), under gVisor's `runsc` where it is
 * installed. A stream tier whose provider runs each environment's container (`containerProvider`,
 * `../container.ts`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { SandboxExecutionPolicy } from '../../../seam/types.js'
import type { ContainerConfig } from '../../config.js'
import { findLaunch } from './launch.js'
import { containerProvider } from './stream.js'
import { DEFAULT_IMAGE, imageExists } from './image.js'
import { locateCommand } from '../../../system/commands.js'
import { removeAbandoned } from '../../../system/abandoned.js'
import type { Environment } from '../environment.js'
import { StreamTier } from '../stream/tier.js'
import type { Tier, TierSetting } from '../tier.js'

const ENGINES = ['podman', 'docker']
/** The engine's working directories (`ContainerRun.cwd`) are named after the process that made them. */
const ENGINE_DIRECTORY = /^ptc-engine-(\d+)-/
const engineOwner = (entry: string) => {
  const owner = ENGINE_DIRECTORY.exec(entry)?.[1]
  return owner === undefined ? undefined : Number(owner)
}

export class ContainerTier implements Tier {
  readonly name = 'container'
  readonly confines = false
  /** A private /tmp as the workspace, nothing of the host's, no network (`../container.ts`). */
  readonly confinement = {
    policy: { mode: 'workspace-write', workspaceRoot: '/tmp', network: 'none' } satisfies SandboxExecutionPolicy,
    instructions:
      'Programs run in a container of their own: the working directory is /tmp, empty at first and the only place you may write ' +
      '(other writes fail with EROFS or EACCES); none of the host\'s files are visible; there is no network (connections fail).',
  }
  readonly fixedCwd = "the container's /tmp"
  private _streams: StreamTier | undefined
  /** Where the engine runs (`ContainerRun.cwd`). */
  private _cwd: string | undefined

  /**
   * Finds the engine, the image, and the OCI runtime and arguments with which the engine runs it
   * here (`findLaunch`: a tiny real container per attempt); rejects saying what to install or set.
   */
  async start(setting: TierSetting): Promise<void> {
    // The engine directories of runtimes whose process is gone (killed before `stop`).
    removeAbandoned(tmpdir(), engineOwner, (directory) => rmSync(directory, { recursive: true, force: true }))
    const { maxMemoryMb, maxProcesses } = setting.config
    const container: Partial<ContainerConfig> = setting.config.container ?? {}
    const engine = container.engine ? locateCommand(container.engine) : ENGINES.map((name) => locateCommand(name)).find((found) => found !== undefined)
    if (!engine) {
      throw new Error(container.engine ? `the container engine ${container.engine} (container.engine) was not found` : 'neither podman nor docker is installed (container.engine)')
    }
    const image = container.image ?? DEFAULT_IMAGE
    if (!(await imageExists(engine, image))) {
      throw new Error(`the image ${image} is not in ${path.basename(engine)}'s store: build it with \`ptc-runtime-image\`${container.image ? ' or fix container.image' : ''}`)
    }
    const cwd = (this._cwd = mkdtempSync(path.join(tmpdir(), `ptc-engine-${process.pid}-`)))
    try {
      const { runtime, args } = await findLaunch({ engine, image, cwd, maxMemoryMb, maxProcesses }, { runtime: container.runtime, args: container.args })
      this._streams = new StreamTier(containerProvider({ engine, image, runtime, args, cwd, maxMemoryMb, maxProcesses }), this.name)
      await this._streams.start(setting)
    } catch (error) {
      this.stop()
      throw error
    }
  }

  spawn(): Environment {
    return this._streams!.spawn()
  }

  /** Once every environment is gone: the engine's private working directory goes too. */
  stop(): void {
    this._streams?.stop()
    if (this._cwd) rmSync(this._cwd, { recursive: true, force: true })
  }
}
