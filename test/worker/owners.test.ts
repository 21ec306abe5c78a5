/**
 * Bookkeeping of retained environments, on a minimal environment (the worker behind a real one
 * is covered by the state tests): confinement forgets its per-(policy, cwd) registry when the
 * last owner is gone, which relies on `onEmpty`.
 */
import { describe, expect, it } from 'vitest'
import type { Environment } from '../../src/host/environment.js'
import { RetainedEnvironments } from '../../src/host/owners.js'

function stubEnvironment(): Environment & { disposed: boolean } {
  let resolveExit!: () => void
  const exited = new Promise<void>((resolve) => (resolveExit = resolve))
  return {
    exited,
    issuedImages: new Map(),
    carried: new Set(),
    runs: 0,
    alive: true,
    disposalMayTrail: true,
    disposed: false,
    attach() {},
    send() {},
    adoptSubprocess: () => true,
    killSubprocesses() {},
    hold() {},
    async dispose() {
      this.disposed = true
      resolveExit()
    },
  }
}

const settle = async () => ({ result: { output: [], value: 1 }, reusable: true, workerEnding: false, initializerFailed: false })

describe('retained environments', () => {
  it('reports empty once its last owner is released, explicitly or after idleMs', async () => {
    const created: Array<ReturnType<typeof stubEnvironment>> = []
    let emptied = 0
    const owners = new RetainedEnvironments(() => (created.push(stubEnvironment()), created.at(-1)!), 30, () => emptied++)
    const alice = {}
    const bob = {}
    await owners.run(alice, settle)
    await owners.run(bob, settle)
    expect(owners.empty).toBe(false)
    await owners.release(alice)
    expect([owners.empty, emptied]).toEqual([false, 0])
    await new Promise((resolve) => setTimeout(resolve, 200)) // bob's idleMs passes
    expect([owners.empty, emptied]).toEqual([true, 1])
    expect(created.map((environment) => environment.disposed)).toEqual([true, true])
  })
})
