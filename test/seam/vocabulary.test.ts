import { describe, expect, it } from 'vitest'
import { PROGRAM_FORMATS } from 'ptc-runtime'
import { CONFINED, startRuntime } from '../helpers/runtime.js'

describe('the vocabulary lists', () => {
  it.each(PROGRAM_FORMATS)('every listed program format is one the provider runs: %s', async (programFormat) => {
    const env = await startRuntime({ programFormat })
    try {
      expect(env.runtime.programFormat).toBe(programFormat)
      const program = programFormat === 'function-body' ? 'return 6 * 7' : '6 * 7'
      expect(await env.run(program)).toEqual({ calls: [], output: [], value: 42, sandbox: CONFINED })
    } finally {
      await env.dispose()
    }
  })

  it('a program format that is not listed is refused at plugin load', async () => {
    await expect(startRuntime({ programFormat: 'module' as never })).rejects.toThrow(/programFormat/)
  })
})
