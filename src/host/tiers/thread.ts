/**
 * `isolation: 'thread'`: every environment is a worker thread of this process. Trusted programs
 * only: nothing the kernel enforces stands between a program and the host (README).
 */
import { frameBudget } from '../frame-bounds.js'
import { rehearsalProgram } from '../programs.js'
import { ThreadEnvironment } from '../thread.js'
import type { Tier, TierSetting } from './tier.js'

export class ThreadTier implements Tier {
  readonly name = 'thread'
  readonly confines = false
  private _setting!: TierSetting

  async start(setting: TierSetting): Promise<void> {
    this._setting = setting
  }

  spawn(): ThreadEnvironment {
    const { config } = this._setting
    const { maxOldGenerationSizeMb, maxMemoryMb } = config
    return new ThreadEnvironment({ maxOldGenerationSizeMb, rehearsal: rehearsalProgram(config.language), maxMemoryMb, frameBudget: frameBudget(config) })
  }
}
