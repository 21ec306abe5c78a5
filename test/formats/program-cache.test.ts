/**
 * The host keeps recent lowerings for programs that repeat: a program of megabytes must not be
 * kept, or distinct long programs would pin their texts in the host for every conversation.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRuntime } from '../helpers/runtime.js'

describe('the host’s cache of lowered programs', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    // Its programs are megabytes long, over the default maxProgramBytes.
    env = await startRuntime({ isolation: 'thread', timeoutMs: 60_000, maxProgramBytes: 4 * 1024 * 1024 })
  })
  afterAll(() => env.dispose())

  it('keeps no long program once its run has ended', async () => {
    setFlagsFromString('--expose-gc')
    const collect = runInNewContext('gc') as () => void
    collect()
    const before = process.memoryUsage().heapUsed
    for (let round = 0; round < 8; round++) {
      const program = `let x = ${round}\n${'x = x + 1 ; '.repeat(170_000)}\nreturn x`
      expect((await env.run(program)).value).toBe(round + 170_000)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    collect()
    collect()
    // Each kept entry held about 4 MiB (its text, its key and its lowering).
    expect((process.memoryUsage().heapUsed - before) / 2 ** 20).toBeLessThan(12)
  }, 120_000)
})
