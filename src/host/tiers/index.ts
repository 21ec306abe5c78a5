/**
 * The tiers a deployment can choose with `config.isolation`. A new tier is a module of its own
 * implementing `Tier` (`tier.ts`) and one line here.
 */
import { ProcessTier } from './process.js'
import { ThreadTier } from './thread.js'
import type { Tier } from './tier.js'

export const TIERS = {
  process: () => new ProcessTier(),
  thread: () => new ThreadTier(),
} satisfies Record<string, () => Tier>

export type TierName = keyof typeof TIERS

export type { EnvironmentDescription, Tier, TierSetting } from './tier.js'
