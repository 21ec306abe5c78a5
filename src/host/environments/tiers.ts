/**
 * The tiers a deployment can choose with `config.isolation`. A new tier is a module of its own
 * implementing `Tier` (`tier.ts`) and one line here; a tier reached over a byte stream needs no
 * module at all (`isolation: { stream }`).
 */
import { ContainerTier } from './container/tier.js'
import { ProcessTier } from './process/tier.js'
import { type PtcStreamFactory, StreamTier } from './stream/tier.js'
import { ThreadTier } from './thread/tier.js'
import type { Tier } from './tier.js'

export const TIERS = {
  process: () => new ProcessTier(),
  thread: () => new ThreadTier(),
  container: () => new ContainerTier(),
} satisfies Record<string, () => Tier>

export type TierName = keyof typeof TIERS

/** `config.isolation`: a tier's name, or the deployer's own stream into each environment. */
export type Isolation = TierName | { stream: PtcStreamFactory }

export function tierOf(isolation: Isolation): Tier {
  return typeof isolation === 'string' ? TIERS[isolation]() : new StreamTier(isolation.stream)
}

export type { EnvironmentDescription, Tier, TierSetting } from './tier.js'
export type { PtcByteStream, PtcStreamFactory, PtcStreamRequest } from './stream/tier.js'
