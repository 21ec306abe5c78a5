import { ESLint } from 'eslint'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: the lint configuration is plain JavaScript without declarations
import { hostileRealmConfig } from '../../eslint.config.mjs'

// The rule as the repository configures it, applied to fixtures that stand for realm code.
const fixtures = new ESLint({ overrideConfigFile: true, overrideConfig: [hostileRealmConfig(['test/lint/fixtures/*.ts'])] })

async function problems(file: string): Promise<string[]> {
  const [result] = await fixtures.lintFiles([`test/lint/fixtures/${file}`])
  return result!.messages.map((message) => `${message.line}: ${message.ruleId ?? message.message}`)
}

describe('the hostile-realm lint rule', () => {
  it("reports for…of, array destructuring and spread, which use the realm's array iterator", async () => {
    expect(await problems('iterates.ts')).toEqual(['3: no-restricted-syntax', '4: no-restricted-syntax', '5: no-restricted-syntax'])
  })

  it('reports built-in methods and globals looked up while a program may have replaced them', async () => {
    const rule = 'hostile-realm/captured-builtins'
    expect(await problems('looks-up.ts')).toEqual([`3: ${rule}`, `4: ${rule}`, `5: ${rule}`, `5: ${rule}`, `6: ${rule}`])
  })

  it('accepts built-ins captured at module load and calls of our own methods', async () => {
    expect(await problems('captures.ts')).toEqual([])
  })

  it("applies to the worker, the JSON helpers, the helper channel's frames and the lowered programs' hooks, and not to the host", async () => {
    const repository = new ESLint()
    const ruleAt = async (file: string) => (await repository.calculateConfigForFile(file))?.rules?.['hostile-realm/captured-builtins']
    for (const file of ['src/worker/main.ts', 'src/json/wire.ts', 'src/transform/hooks.ts', 'src/transform/position-map.ts', 'src/intrinsics.ts', 'src/protocol/frames.ts']) {
      expect(await ruleAt(file), file).toBeDefined()
    }
    expect(await ruleAt('src/host/provider.ts')).toBeUndefined()
    expect(await ruleAt('src/transform/lower.ts')).toBeUndefined()
  })
})
