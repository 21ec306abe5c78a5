import { describe, expect, it } from 'vitest'
import { startRuntime } from '../helpers/runtime.js'

describe('executionInstructions', () => {
  const limitsLine = async (timeoutMs: number, maxOutputBytes: number) => {
    const env = await startRuntime({ timeoutMs, maxOutputBytes, poolSize: 0 })
    try {
      return env.runtime.executionInstructions.split('\n').find((line) => line.startsWith('Limits:'))
    } finally {
      await env.dispose()
    }
  }

  it('state the limits the way a person writes them', async () => {
    expect(await limitsLine(120_000, 64 * 2 ** 20)).toBe('Limits: 2 min per call by default; 64 MiB of printed output and result together; 1000 tool calls per program.')
    expect(await limitsLine(30_000, 1_000_000)).toBe('Limits: 30 s per call by default; 1 MB of printed output and result together; 1000 tool calls per program.')
    expect(await limitsLine(1500, 1536)).toBe('Limits: 1.5 s per call by default; 1.5 KiB of printed output and result together; 1000 tool calls per program.')
  })

  it('never round a small budget down to nothing', async () => {
    expect(await limitsLine(500, 999)).toBe('Limits: 500 ms per call by default; 999 bytes of printed output and result together; 1000 tool calls per program.')
    expect(await limitsLine(1250, 1_000_001)).toBe('Limits: 1250 ms per call by default; 1000001 bytes of printed output and result together; 1000 tool calls per program.')
  })
})
