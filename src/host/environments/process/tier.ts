/**
 * `isolation: 'process'` (the default): every environment is a helper process of its own,
 * confined by bubblewrap to its sandbox policy. Without a policy (`sandbox: 'none'`) the helper
 * still gets a PID namespace of its own when bubblewrap works here, so that its processes are
 * known and killed with it.
 */
import { holdCpuGroup } from '../../../system/cpu-group.js'
import { dataBaseline } from '../../../system/memory-limit.js'
import { type ChannelLimits, IDLE_FRAME_BYTES, channelLimits } from '../../connection/frame-bounds.js'
import { processEnvironment } from './environment.js'
import { helperSnapshot, holdHelperSnapshot } from './helper-snapshot.js'
import { rehearsalProgram } from '../../run/programs.js'
import { locateCommand } from '../../../system/commands.js'
import { namespaceArguments, probeBwrap } from '../../sandbox/bwrap.js'
import { isConfined } from '../../sandbox/policy.js'
import type { Environment } from '../environment.js'
import type { EnvironmentDescription, Tier, TierSetting } from '../tier.js'

export class ProcessTier implements Tier {
  readonly name = 'process'
  readonly confines = true
  /** An idle pooled helper's PSS, measured at 15.4-16.9 MB (docs/performance.md). */
  readonly spareMb = 16
  private _setting!: TierSetting
  /** bubblewrap, when it works here: unconfined helpers still get a PID namespace of their own. */
  private _namespaces: string | undefined
  /** What a fresh helper reserves before any program runs; the memory budget comes on top. */
  private _baselineKb = 0
  /** The bounds of every helper's channel: they depend on the configuration only. */
  private _limits!: ChannelLimits
  /** Its hold on the host's helper CPU group (cpu-group.ts), from its start to its stop. */
  private _releaseCpuGroup: (() => void) | undefined
  /** Its hold on the helpers' startup snapshot (helper-snapshot.ts), from its start to its stop. */
  private _releaseSnapshot: (() => Promise<void>) | undefined

  async start(setting: TierSetting): Promise<void> {
    this._setting = setting
    const { config } = setting
    this._limits = channelLimits('frame', config, IDLE_FRAME_BYTES)
    this._baselineKb = await dataBaseline(config.maxOldGenerationSizeMb)
    const configured = config.sandbox === 'none' ? undefined : config.sandbox?.bwrapPath
    const bwrap = process.platform === 'linux' ? locateCommand(configured ?? 'bwrap') : undefined
    if (bwrap && (await probeBwrap(bwrap)) === undefined) this._namespaces = bwrap
    this._releaseCpuGroup = holdCpuGroup()
    // Made in the background: the helpers that start before it is ready load their bundle.
    const { maxOldGenerationSizeMb, language } = config
    this._releaseSnapshot = holdHelperSnapshot({ maxOldGenerationSizeMb, rehearsal: rehearsalProgram(language) }, this._baselineKb)
  }

  async stop(): Promise<void> {
    // The snapshot's builder, if it still runs, leaves the CPU group first.
    await this._releaseSnapshot?.()
    this._releaseCpuGroup?.()
  }

  spawn({ policy }: EnvironmentDescription): Environment {
    const { config, sandbox } = this._setting
    const { maxOldGenerationSizeMb, maxMemoryMb, maxProcesses } = config
    const cwd = policy?.workspaceRoot ?? config.cwd
    const snapshot = helperSnapshot(maxOldGenerationSizeMb)
    const confined = policy !== undefined && isConfined(policy.mode)
    const namespaces = this._namespaces
    // Made as the helper starts: looking in its writable roots for repositories may refuse it.
    const wrapper = confined ? () => sandbox!.wrapper(policy)! : namespaces && (() => ({ command: namespaces, args: namespaceArguments(cwd) }))
    return processEnvironment({
      ...(wrapper ? { wrapper } : {}),
      // Under bubblewrap the PID namespace makes the environment's processes known: sampled as one budget.
      budget: { maxProcesses, maxMemoryMb },
      confined,
      cwd,
      maxMemoryMb,
      baselineKb: this._baselineKb,
      maxOldGenerationSizeMb,
      ...(snapshot === undefined ? {} : { snapshot }),
      rehearsal: rehearsalProgram(config.language),
      channelLimits: this._limits,
    })
  }
}
