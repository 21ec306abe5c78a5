/**
 * A helper the kernel will not start: `spawn` throws (E2BIG for a command line too long, EMFILE,
 * ENOMEM) rather than reporting an error later. The environment ends unstarted and its start is
 * refused; the host goes on (a pool refill's throw once ended it).
 */
import { describe, expect, it } from 'vitest'
import { PipeEnvironment } from '../../src/host/environments/pipe.js'

describe('a pipe whose helper cannot be spawned', () => {
  it('refuses the environment\'s start, naming why, and ends it', async () => {
    const environment = new PipeEnvironment({ startTimeoutMs: 5_000, maxMemoryMb: 64, confined: true }, () => {
      throw Object.assign(new Error('spawn E2BIG'), { code: 'E2BIG' })
    })
    expect(await environment.ready).toMatchObject({ kind: 'sandbox-unavailable', message: expect.stringContaining('could not be started (spawn E2BIG)') })
    expect(environment.alive).toBe(false)
    await environment.exited
  })
})
