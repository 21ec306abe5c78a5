/**
 * The tiers a deployment can choose with `config.isolation`. A new tier is a module of its own
 * implementing `Tier` (`tier.ts`) and one line here, which makes its name a valid
 * `config.isolation` in the configuration's schema and in the public options type alike
 * (`plain/tier.ts` is the smallest: a pipe and nothing more); a tier reached over a byte stream
 * needs no module at all (`isolation: { provider }` or `{ stream }`).
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

/**
 * The names in `TIERS`, each a valid `config.isolation`. The public options type takes its tier
 * names from here (`TierName`), and the published declarations spell them out as a union of
 * strings, since the declaration of this constant is inferred.
 */
export const TIER_NAMES = namesOf(TIERS)

/** A tier's name: `config.isolation` as a string. */
export type TierName = (typeof TIER_NAMES)[number]

function namesOf<Record extends object>(record: Record): Array<keyof Record & string> {
  return Object.keys(record) as Array<keyof Record & string>
}

/** `config.isolation`: a tier's name, or the deployer's own sandboxes (a provider, or a bare stream factory). */
export type Isolation = TierName | { provider: PtcSandboxProvider } | { stream: PtcStreamFactory }

export function tierOf(isolation: Isolation): Tier {
  if (typeof isolation === 'string') return TIERS[isolation]()
  return new StreamTier('provider' in isolation ? isolation.provider : streamProvider(isolation.stream))
}

export type { EnvironmentDescription, Tier, TierSetting } from './tier.js'
export type { PtcByteStream, PtcSandbox, PtcSandboxBudgets, PtcSandboxProvider, PtcSandboxRequest, PtcStreamFactory, PtcStreamRequest } from './stream/provider.js'
export { PtcSandboxLost } from './stream/provider.js'
