/**
 * A tier is one file plus its line in `TIERS` (src/host/environments/tiers.ts): that line alone
 * makes its name a valid `config.isolation`, in the configuration's schema and in the public
 * options type the package publishes, with nothing else to register.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { WorkerPtcRuntimeOptions } from 'ptc-runtime'
import { Config } from '../../src/host/config.js'
import { TIERS, type TierName } from '../../src/host/environments/tiers.js'

const DIST = new URL('../../dist/', import.meta.url)

/** The tier names the published declarations spell out (the union `TIER_NAMES` is declared with). */
function publishedTierNames(): string[] {
  for (const file of readdirSync(DIST).filter((name) => name.endsWith('.d.ts'))) {
    const union = /declare const TIER_NAMES: \(([^)]*)\)\[\];/.exec(readFileSync(new URL(file, DIST), 'utf8'))?.[1]
    if (union !== undefined) return union.split('|').map((name) => JSON.parse(name.trim()) as string)
  }
  throw new Error('no declaration of TIER_NAMES in the published declarations')
}

describe('registering a tier', () => {
  it('is its line in TIERS: the published options type names exactly the tiers TIERS lists', () => {
    expect(publishedTierNames()).toEqual(Object.keys(TIERS))
    // The same, as the compiler sees the source (npm run typecheck).
    expectTypeOf<Extract<NonNullable<WorkerPtcRuntimeOptions['isolation']>, string>>().toEqualTypeOf<keyof typeof TIERS>()
  })

  it('makes every tier of TIERS a valid config.isolation, and nothing else a string one', () => {
    for (const name of Object.keys(TIERS) as TierName[]) expect(Config({ isolation: name }).isolation).toBe(name)
    expect(() => Config({ isolation: 'vm' as never })).toThrow()
  })
})
