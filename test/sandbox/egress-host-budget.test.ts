/**
 * The host's budget for fetch answers ends idle hogs (`src/host/egress/host-budget.ts`): answers
 * stay charged until their replies are written, so conversations that fetch their whole
 * `maxFetchBytesInFlight` and stop reading would hold all of `maxHostFetchBytesInFlight`, and
 * every other conversation's fetch would be refused until their runs ended. A refused fetch that
 * asks no more than its fair share ends the run of one that has held more than its share in
 * unread answers for `UNREAD_HOLD_MS`; a program that reads its answers is never ended.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HostByteBudget, UNREAD_HOLD_MS } from '../../src/host/egress/host-budget.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap } from '../helpers/sandbox.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('the host budget ends the run of an environment that holds its answers unread', () => {
  const HOLD_MS = 30
  /** A host of `limit` bytes, and a way to add environments of `each` bytes whose ends are recorded. */
  const hostOf = (limit: number, each: number) => {
    const host = new HostByteBudget(limit, 'maxHostFetchBytesInFlight', HOLD_MS)
    const ended: string[] = []
    const environment = (name: string, onEnd: () => void = () => {}) => {
      const budget = host.environment(each, 'maxFetchBytesInFlight', (message) => {
        ended.push(`${name}: ${message}`)
        onEnd()
      })
      return budget
    }
    /** Charges `bytes` as the exchange does: to the environment, then to the host for it. */
    const charge = (budget: ReturnType<typeof environment>, bytes: number) => {
      if (!budget.take(bytes)) return false
      if (host.take(bytes, budget)) return true
      budget.give(bytes)
      return false
    }
    return { host, ended, environment, charge }
  }

  it('ends the hog whose answers waited longest once they waited the hold time, and gives its room to the refused fetch', async () => {
    const { host, ended, environment, charge } = hostOf(300, 200)
    const hogs = ['first', 'second'].map((name) => {
      const budget = environment(name, () => {
        // Its run closes: what it held is given back, to both budgets, as the exchange's release does.
        host.give(budget.used)
        budget.give(budget.used)
      })
      return budget
    })
    expect(charge(hogs[0]!, 150)).toBe(true)
    hogs[0]!.waiting()
    expect(charge(hogs[1]!, 150)).toBe(true)
    hogs[1]!.waiting()
    const bystander = environment('bystander')
    // Before the hold time nobody is ended and the fetch is refused, as before.
    expect(charge(bystander, 10)).toBe(false)
    expect(ended).toEqual([])
    await sleep(HOLD_MS + 10)
    expect(charge(bystander, 10)).toBe(true)
    expect(ended).toHaveLength(1)
    expect(ended[0]).toMatch(/^first: the run held 150 bytes of fetch answers it had not read, the oldest for \d+\.\d s, more than its share \(100 bytes\) of the host's 300 \(maxHostFetchBytesInFlight\), while another conversation's fetch needed room, so the run was ended; read each answer/)
    expect([host.used, hogs[0]!.used, hogs[1]!.used, bystander.used]).toEqual([160, 0, 150, 10])
  })

  it('ends nobody for a fetch that would take more than its share, nor an environment whose answers are still arriving', async () => {
    const { ended, environment, charge } = hostOf(300, 300)
    const idle = environment('idle')
    expect(charge(idle, 160)).toBe(true)
    idle.waiting()
    const greedy = environment('greedy')
    expect(charge(greedy, 140)).toBe(true)
    await sleep(HOLD_MS + 10)
    // 160 would pass its share of 150: the idle hog is not ended for it.
    expect(charge(greedy, 20)).toBe(false)
    expect(ended).toEqual([])
    const { environment: another, charge: chargeAnother, ended: endedThere } = hostOf(300, 300)
    const arriving = another('arriving')
    expect(chargeAnother(arriving, 300)).toBe(true) // none of its answers is complete yet
    await sleep(HOLD_MS + 10)
    expect(chargeAnother(another('bystander'), 10)).toBe(false)
    expect(endedThere).toEqual([])
  })

  it('ends a hog once, and refuses the fetch when its end gives nothing back at once', async () => {
    const { ended, environment, charge } = hostOf(300, 300)
    const stuck = environment('stuck')
    expect(charge(stuck, 300)).toBe(true)
    stuck.waiting()
    await sleep(HOLD_MS + 10)
    const bystander = environment('bystander')
    expect(charge(bystander, 10)).toBe(false)
    expect(charge(bystander, 10)).toBe(false)
    expect(ended).toHaveLength(1)
  })
})

/** 512 000 bytes after 200 ms: an answer that arrives after the program has gone into its loop, too big for the kernel's buffers. */
const ANSWER_BYTES = 512_000

async function serve(): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer((request, response) => {
    if (request.url === '/small') return response.writeHead(200).end('small')
    setTimeout(() => response.writeHead(200, { 'content-length': ANSWER_BYTES }).end(Buffer.alloc(ANSWER_BYTES, 97)), 200)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `127.0.0.1:${(server.address() as AddressInfo).port}` }
}

describe.skipIf(!bwrap)('conversations that hold the host budget with unread answers are ended for another conversation', () => {
  let host: Awaited<ReturnType<typeof serve>>
  let env: Awaited<ReturnType<typeof startRuntime>>

  beforeAll(async () => {
    host = await serve()
    // Each environment holds two answers at most; four hold the whole host's budget.
    env = await startRuntime({ maxFetchBytesInFlight: 2 * ANSWER_BYTES, maxHostFetchBytesInFlight: 8 * ANSWER_BYTES, sandbox: { network: { allow: [host.origin] } } })
  })
  afterAll(async () => {
    await env?.dispose()
    host?.server.close()
  })

  /** Fetches its whole budget, lets the calls go out, and never reads the answers. */
  const hog = (ms: number) => `for (const _ of [0, 1]) fetch('http://${host.origin}/big').catch(() => {})
    await new Promise((resolve) => setTimeout(resolve, 50))
    const started = Date.now()
    while (Date.now() - started < ${ms}) {}
    return 'hog'`
  const bystander = () => `return await fetch('http://${host.origin}/small').then((response) => response.text(), (error) => error.message)`

  it("lets a bystander's fetch through once the hogs' answers waited the hold time, ending one hog's run with the rule's message", async () => {
    const started = Date.now()
    const hogs = Array.from({ length: 4 }, () => env.run(hog(UNREAD_HOLD_MS + 5_000), { stateOwner: {}, timeoutMs: 30_000 }))
    await sleep(UNREAD_HOLD_MS)
    // Tried until well before the hogs stop by themselves (a loaded machine starts them later).
    let answer: unknown
    while (answer !== 'small' && Date.now() - started < UNREAD_HOLD_MS + 4_000) {
      answer = (await env.run(bystander(), { stateOwner: {} })).value
      if (answer !== 'small') await sleep(300)
    }
    expect(answer).toBe('small')
    const ended = (await Promise.all(hogs)).filter((result) => result.error)
    expect(ended).toHaveLength(1)
    expect(ended[0]!.error!.kind).toBe('abort')
    expect(ended[0]!.error!.message).toMatch(/^the run held \d+ bytes of fetch answers it had not read, the oldest for \d+\.\d s, more than its share \(\d+ bytes\) of the host's 4096000 \(maxHostFetchBytesInFlight\), while another conversation's fetch needed room, so the run was ended/)
  }, 40_000)

  it('never ends a program that reads its answers as they come, even while its fetches are refused for room', async () => {
    const reader = `const seen = { read: 0, refused: 0 }
      const started = Date.now()
      while (Date.now() - started < ${UNREAD_HOLD_MS + 3_000}) {
        await Promise.all([0, 1].map(() => fetch('http://${host.origin}/big').then(async (response) => { await response.arrayBuffer(); seen.read++ }, () => { seen.refused++ })))
      }
      return seen`
    // Three hogs leave room for one reader's two answers; two readers contend for it.
    const hogs = Array.from({ length: 3 }, () => env.run(hog(UNREAD_HOLD_MS + 4_000), { stateOwner: {}, timeoutMs: 30_000 }))
    await sleep(500)
    const readers = await Promise.all([0, 1].map(() => env.run(reader, { stateOwner: {}, timeoutMs: 30_000 })))
    for (const result of readers) {
      expect(result.error).toBeUndefined()
      expect((result.value as { read: number }).read).toBeGreaterThan(0)
    }
    // The hogs may be ended for the readers; never the readers for anyone.
    for (const result of await Promise.all(hogs)) if (result.error) expect(result.error.message).toMatch(/^the run held \d+ bytes of fetch answers it had not read/)
  }, 40_000)
})
