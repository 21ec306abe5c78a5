/**
 * The host's budget for fetch answers keeps every environment a floor (`src/host/egress/host-budget.ts`):
 * answers stay charged until their replies are written, so conversations that fetch their whole
 * `maxFetchBytesInFlight` and stop reading hold all of `maxHostFetchBytesInFlight` until their runs
 * end. Another conversation's fetches within FETCH_FLOOR_BYTES go on meanwhile, and nobody's run is
 * ended for it.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ByteBudget } from '../../src/host/egress/byte-budget.js'
import { FETCH_FLOOR_BYTES, HostByteBudget } from '../../src/host/egress/host-budget.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap } from '../helpers/sandbox.js'

describe("the host's fetch budget", () => {
  /** Charges `bytes` as the exchange does: to the environment, then to the host for it. */
  const charge = (host: HostByteBudget, environment: ByteBudget, bytes: number) => {
    if (!environment.take(bytes)) return false
    if (host.take(bytes, environment)) return true
    environment.give(bytes)
    return false
  }

  it('refuses past its limit an environment holding more than the floor, and takes anyway what keeps one within it', () => {
    const host = new HostByteBudget(3 * FETCH_FLOOR_BYTES, 'maxHostFetchBytesInFlight')
    const hogs = [0, 1, 2].map(() => new ByteBudget(4 * FETCH_FLOOR_BYTES, 'maxFetchBytesInFlight'))
    for (const hog of hogs) expect(charge(host, hog, FETCH_FLOOR_BYTES)).toBe(true)
    // Full: a hog past its floor is refused, and gives back what it charged itself.
    expect(charge(host, hogs[0]!, 1)).toBe(false)
    expect(hogs[0]!.used).toBe(FETCH_FLOOR_BYTES)
    // A newcomer's answers within the floor go on, past the host's limit by at most the floor.
    const bystander = new ByteBudget(4 * FETCH_FLOOR_BYTES, 'maxFetchBytesInFlight')
    expect(charge(host, bystander, FETCH_FLOOR_BYTES / 2)).toBe(true)
    expect(charge(host, bystander, FETCH_FLOOR_BYTES / 2)).toBe(true)
    expect(charge(host, bystander, 1)).toBe(false)
    expect(host.used).toBe(4 * FETCH_FLOOR_BYTES)
    // What is given back returns the host under its limit.
    host.give(bystander.used)
    bystander.give(bystander.used)
    expect(host.used).toBe(3 * FETCH_FLOOR_BYTES)
  })
})

/** 1 536 000 bytes after 200 ms: an answer that arrives after the program has gone into its loop, too big for the kernel's buffers. */
const ANSWER_BYTES = 1_536_000

async function serve(): Promise<{ server: http.Server; origin: string }> {
  const server = http.createServer((request, response) => {
    if (request.url === '/small') return response.writeHead(200).end('small')
    setTimeout(() => response.writeHead(200, { 'content-length': ANSWER_BYTES }).end(Buffer.alloc(ANSWER_BYTES, 97)), 200)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, origin: `127.0.0.1:${(server.address() as AddressInfo).port}` }
}

describe.skipIf(!bwrap)('conversations that hold the whole host budget with unread answers', () => {
  let host: Awaited<ReturnType<typeof serve>>
  let env: Awaited<ReturnType<typeof startRuntime>>

  beforeAll(async () => {
    host = await serve()
    // Each environment holds two answers at most; two hold the whole host's budget.
    env = await startRuntime({ maxFetchBytesInFlight: 2 * ANSWER_BYTES, maxHostFetchBytesInFlight: 4 * ANSWER_BYTES, sandbox: { network: { allow: [host.origin] } } })
  })
  afterAll(async () => {
    await env?.dispose()
    host?.server.close()
  })

  it("leave another conversation's small fetches working and its large ones refused naming the budget, and are not ended", async () => {
    // Fetches its whole budget, says it loops, and loops while the answers arrive, never reading them.
    const hog = `for (const _ of [0, 1]) fetch('http://${host.origin}/big').catch(() => {})
      await new Promise((resolve) => setTimeout(resolve, 50)) // the fetches' calls go out
      await tools.looping()
      const started = Date.now()
      while (Date.now() - started < 6_000) {}
      return 'hog'`
    let looping = 0
    const tools = { global: 'tools', functions: { looping: async () => { looping++; return null } } }
    const hogs = Array.from({ length: 2 }, () => env.run(hog, { stateOwner: {}, timeoutMs: 30_000, bindings: [tools] }))
    // Until both loop and their answers (200 ms after the calls) have arrived: the host's budget is full.
    while (looping < 2) await new Promise((resolve) => setTimeout(resolve, 50))
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const small = await env.run(`return await (await fetch('http://${host.origin}/small')).text()`, {})
    expect(small.error).toBeUndefined()
    expect(small.value).toBe('small')
    const large = await env.run(`return await fetch('http://${host.origin}/big').then((response) => response.arrayBuffer().then(() => 'read'), (error) => error.message)`, {})
    expect(large.value).toMatch(/the responses of all fetches in flight on this host would pass 6144000 bytes \(maxHostFetchBytesInFlight\)/)
    expect((await Promise.all(hogs)).map((result) => result.value)).toEqual(['hog', 'hog'])
  }, 40_000)
})
