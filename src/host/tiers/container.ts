/**
 * `isolation: 'container'`: every environment is a container of its own, run by podman or
 * docker from the package's image (`ptc-runtime-image`), under gVisor's `runsc` where it is
 * installed. A stream tier whose stream is the container's stdio (`../container.ts`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { SandboxExecutionPolicy } from '../../seam/types.js'
import type { ContainerConfig } from '../config.js'
import { ContainerStream } from '../container.js'
import { DEFAULT_IMAGE, imageExists } from '../image-build.js'
import { locateCommand } from '../locate.js'
import type { StreamEnvironment } from '../stream.js'
import { StreamTier } from './stream.js'
import type { Tier, TierSetting } from './tier.js'

const ENGINES = ['podman', 'docker']

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
  private _streams: StreamTier | undefined
  /** Where the engine runs (`ContainerRun.cwd`). */
  private _cwd: string | undefined

  /** Finds the engine, the runtime and the image once; what is missing fails every run, saying what to install. */
  async start(setting: TierSetting): Promise<void> {
    const { maxMemoryMb, maxProcesses } = setting.config
    const container: Partial<ContainerConfig> = setting.config.container ?? {}
    const engine = container.engine ? locateCommand(container.engine) : ENGINES.map((name) => locateCommand(name)).find((found) => found !== undefined)
    const image = container.image ?? DEFAULT_IMAGE
    let problem: string | undefined
    if (!engine) {
      problem = container.engine ? `the container engine ${container.engine} (container.engine) was not found` : 'neither podman nor docker is installed (container.engine)'
    } else if (!(await imageExists(engine, image))) {
      problem = `the image ${image} is not in ${path.basename(engine)}'s store: build it with \`ptc-runtime-image\`${container.image ? ' or fix container.image' : ''}`
    }
    const runtime = container.runtime ?? this._gvisor(engine)
    const cwd = (this._cwd = mkdtempSync(path.join(tmpdir(), 'ptc-engine-')))
    this._streams = new StreamTier(({ id }) => {
      if (problem) throw new Error(problem)
      return new ContainerStream({ engine: engine!, image, runtime, args: container.args ?? [], name: `ptc-${id}`, cwd, maxMemoryMb, maxProcesses })
    }, this.name)
    await this._streams.start(setting)
  }

  spawn(): StreamEnvironment {
    return this._streams!.spawn()
  }

  /** Once every environment is gone: the engine's private working directory goes too. */
  stop(): void {
    if (this._cwd) rmSync(this._cwd, { recursive: true, force: true })
  }

  /** gVisor's runtime where installed: a path for podman, the name docker registers it under. */
  private _gvisor(engine: string | undefined): string | undefined {
    const runsc = locateCommand('runsc')
    if (!runsc || !engine) return undefined
    return path.basename(engine).startsWith('docker') ? 'runsc' : runsc
  }
}
