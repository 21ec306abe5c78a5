/**
 * The tiers a deployment can choose with `config.isolation`. A new tier is a module of its own
 * implementing `Tier` (`tier.ts`) and one line here (`plain/tier.ts` is the smallest: a pipe and
 * nothing more); a tier reached over a byte stream needs no module at all (`isolation: { provider }`
 * or `{ stream }`).
 */
import { ContainerTier } from './container/tier.js'
import { PlainTier } from './plain/tier.js'
import { ProcessTier } from './process/tier.js'
import { type PtcSandboxProvider, type PtcStreamFactory, streamProvider } from './stream/provider.js'
import { StreamTier } from './stream/tier.js'
import { ThreadTier } from './thread/tier.js'
import type { Tier } from './tier.js'

export const TIERS = {
  process: () => new ProcessTier(),
  thread: () => new ThreadTier(),
  container: () => new ContainerTier(),
  plain: () => new PlainTier(),
} satisfies Record<string, () => Tier>

export type TierName = keyof typeof TIERS

/** `config.isolation`: a tier's name, or the deployer's own sandboxes (a provider, or a bare stream factory). */
export type Isolation = TierName | { provider: PtcSandboxProvider } | { stream: PtcStreamFactory }

export function tierOf(isolation: Isolation): Tier {
  if (typeof isolation === 'string') return TIERS[isolation]()
  return new StreamTier('provider' in isolation ? isolation.provider : streamProvider(isolation.stream))
}

export type { EnvironmentDescription, Tier, TierSetting } from './tier.js'
export type { PtcByteStream, PtcSandbox, PtcSandboxBudgets, PtcSandboxProvider, PtcSandboxRequest, PtcStreamFactory, PtcStreamRequest } from './stream/provider.js'
export { PtcSandboxLost } from './stream/provider.js'
