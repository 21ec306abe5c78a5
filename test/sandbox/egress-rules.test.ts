/**
 * The egress broker's rules, called directly with a resolver the test controls: what a name may
 * resolve to, how wildcards and ports match, and which addresses count as private. The end to
 * end path (a confined program, a real server) is in egress.test.ts.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ByteBudget } from '../../src/host/egress/byte-budget.js'
import { type EgressOptions, checkEgress, egressNamespace, isPrivateAddress } from '../../src/host/egress/broker.js'
import { PTC_FETCH_METHODS } from '../../src/protocol/messages.js'
import { PtcCallRefusal } from '../../src/seam/refusal.js'
import type { SandboxEgress } from '../../src/seam/types.js'

/** Fetches `url` through a broker for `egress` whose resolver answers `addresses` for every name. */
async function fetchThrough(egress: SandboxEgress, url: string, addresses: string[]): Promise<unknown> {
  const resolved: string[] = []
  const namespace = egressNamespace(egress, {
    lookup: async (host) => {
      resolved.push(host)
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    },
  })
  const send = namespace.functions.send! as (args: unknown, call: { signal: AbortSignal }) => Promise<unknown>
  return send({ method: 'GET', url, headers: [] }, { signal: AbortSignal.timeout(5_000) })
}

describe('the egress broker refuses before connecting', () => {
  const allowed: SandboxEgress = { allow: ['*.example.com', 'api.github.com'] }

  it('refuses an allowed name whose DNS answer is loopback: no rebinding to the host', async () => {
    await expect(fetchThrough(allowed, 'https://api.example.com/', ['127.0.0.1'])).rejects.toThrow(
      'fetch to api.example.com refused: it resolves to 127.0.0.1, a private, loopback or link-local address, and allow entry *.example.com is not an IP literal')
  })

  it('refuses when any one of the answers is private, IPv4-mapped ones included', async () => {
    await expect(fetchThrough(allowed, 'https://api.github.com/', ['140.82.112.6', '::ffff:10.0.0.1'])).rejects.toThrow(/resolves to ::ffff:10\.0\.0\.1/)
    await expect(fetchThrough(allowed, 'https://api.github.com/', ['169.254.169.254'])).rejects.toThrow(/resolves to 169\.254\.169\.254/)
  })

  it('matches a wildcard against subdomains only, and only the default port unless the entry names one', async () => {
    const refusal = await fetchThrough(allowed, 'https://example.com/', ['93.184.216.34']).catch((error: unknown) => error)
    expect(PtcCallRefusal.is(refusal)).toBe(true)
    expect((refusal as Error).message).toBe('fetch to example.com refused: host example.com is not in the network allow list (*.example.com, api.github.com)')
    await expect(fetchThrough(allowed, 'https://api.github.com:8443/', ['140.82.112.6'])).rejects.toThrow(/host api\.github\.com:8443 is not in the network allow list/)
    await expect(fetchThrough(allowed, 'ftp://api.github.com/', ['140.82.112.6'])).rejects.toThrow(/scheme ftp: is not allowed \(http: and https: only\)/)
  })

  it('refuses an IP address no entry names, even a public one', async () => {
    await expect(fetchThrough({ allow: ['*.example.com:8080'] }, 'http://93.184.216.34:8080/', [])).rejects.toThrow(/host 93\.184\.216\.34:8080 is not in the network allow list/)
  })

  it('counts loopback, private, link-local, shared and unspecified addresses as private, and public ones not', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(isPrivateAddress(address), address).toBe(true)
    }
    for (const address of ['140.82.112.6', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(address), address).toBe(false)
  })
})

/** A server on the host's loopback that echoes what it was sent: the method's TRACE echo, or the headers as JSON, or a body of `/bytes/N`. */
async function echoServer(): Promise<{ server: http.Server; origin: string; methods: string[]; finishHeld: () => void }> {
  const methods: string[] = []
  const held: http.ServerResponse[] = []
  const server = http.createServer((request, response) => {
    methods.push(request.method!)
    const sent = JSON.stringify(request.headers)
    if (request.method === 'TRACE') return void response.writeHead(200, { 'content-type': 'message/http' }).end(`TRACE ${request.url} HTTP/1.1\r\n${sent}`)
    const size = /^\/bytes\/(\d+)$/.exec(request.url!)
    if (size) return void response.writeHead(200).end(Buffer.alloc(Number(size[1]), 120))
    // `/hold/N`: N bytes now, and the end of the answer only when the test says.
    const hold = /^\/hold\/(\d+)$/.exec(request.url!)
    if (hold) {
      response.writeHead(200).write(Buffer.alloc(Number(hold[1]), 120))
      return void held.push(response)
    }
    if (request.url === '/header') return void response.writeHead(200, { 'x-you-sent': String(request.headers.authorization) }).end('ok')
    if (request.url === '/gzip') return void response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(sent))
    response.writeHead(200, { 'content-type': 'application/json' }).end(sent)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const finishHeld = () => {
    for (const response of held.splice(0)) response.end()
  }
  return { server, origin: `127.0.0.1:${(server.address() as AddressInfo).port}`, methods, finishHeld }
}

describe('the egress broker keeps what it adds and what it holds bounded', () => {
  let echo: Awaited<ReturnType<typeof echoServer>>
  const SECRET = 'Bearer s3cret-token-of-the-host'
  beforeAll(async () => {
    echo = await echoServer()
  })
  afterAll(() => echo.server.close())

  const broker = (options: EgressOptions = {}) => {
    const namespace = egressNamespace({ allow: [echo.origin], headers: { [echo.origin]: { authorization: SECRET } } }, options)
    return namespace.functions.send! as (args: unknown, call: { signal: AbortSignal }) => Promise<{ body: string; headers: [string, string][] }>
  }
  const request = (path: string, extra: object = {}) => ({ method: 'GET', url: `http://${echo.origin}${path}`, headers: [], ...extra })

  it('refuses a method the program\'s fetch refuses (TRACE would echo the injected header), naming the methods, before connecting', async () => {
    echo.methods.length = 0
    const send = broker()
    for (const method of ['TRACE', 'trace', 'CONNECT', 'TRACK', 'PROPFIND', 'get']) {
      const refusal = await send(request('/', { method }), { signal: AbortSignal.timeout(5_000) }).catch((error: unknown) => error)
      expect(PtcCallRefusal.is(refusal), method).toBe(true)
      expect((refusal as Error).message).toBe(`fetch: method ${JSON.stringify(method)} is not allowed; the methods are ${PTC_FETCH_METHODS.join(', ')}`)
    }
    expect(echo.methods).toEqual([])
  })

  it('refuses an answer that carries an injected header back, in its body, its headers or compressed', async () => {
    const send = broker()
    for (const [path, headers] of [['/', []], ['/header', []], ['/gzip', [['accept-encoding', 'gzip']]]] as const) {
      const outcome = await send(request(path, { headers }), { signal: AbortSignal.timeout(5_000) }).then((answer) => JSON.stringify(answer), (error: Error) => error.message)
      expect(outcome, path).not.toContain('s3cret')
      expect(outcome, path).toMatch(new RegExp(`^fetch to ${echo.origin.replace(/\./g, '\\.')} refused: the answer (carries|is encoded)`))
    }
  })

  it('caps the bytes of all fetches in flight per environment and per host, naming the budget', async () => {
    const host = new ByteBudget(12 * 1024 * 1024, 'maxHostFetchBytesInFlight')
    const environment = () => new ByteBudget(6 * 1024 * 1024, 'maxFetchBytesInFlight')
    const signal = AbortSignal.timeout(10_000)
    const four = request(`/hold/${4 * 1024 * 1024}`)
    /** Starts each fetch; the first to settle is a refusal, since the others wait for `finishHeld`. */
    const race = async (sends: ReturnType<typeof broker>[]) => {
      const outcomes = sends.map((send) => send(four, { signal }).then(() => 'answered', (error: Error) => error.message))
      const first = await Promise.race(outcomes)
      echo.finishHeld()
      return { first, all: await Promise.all(outcomes) }
    }
    const mine = broker({ budgets: { environment: environment(), host } })
    const one = await race([mine, mine])
    expect(one.first).toMatch(/^fetch to 127\.0\.0\.1:\d+ failed: the responses of this environment's fetches in flight would pass 6291456 bytes \(maxFetchBytesInFlight\)$/)
    expect(one.all.sort()).toEqual(['answered', one.first])
    expect(host.used).toBe(0)
    const many = await race(Array.from({ length: 4 }, () => broker({ budgets: { environment: environment(), host } })))
    expect(many.first).toMatch(/^fetch to 127\.0\.0\.1:\d+ failed: the responses of all fetches in flight on this host would pass 12582912 bytes \(maxHostFetchBytesInFlight\)$/)
    expect(many.all.filter((outcome) => outcome === 'answered').length).toBeGreaterThanOrEqual(2)
    expect(host.used).toBe(0)
  })

  it('serves twenty fetches at once on one signal without a MaxListeners warning', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`)
    process.on('warning', onWarning)
    try {
      const send = egressNamespace({ allow: [echo.origin] }).functions.send! as (args: unknown, call: { signal: AbortSignal }) => Promise<unknown>
      const signal = new AbortController().signal
      await Promise.all(Array.from({ length: 20 }, () => send(request('/bytes/10'), { signal })))
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings).toEqual([])
  })
})

describe('an allow entry that can never be fetched is refused when the policy is checked', () => {
  it('refuses localhost names, which always resolve to loopback, naming the entry and the rule', () => {
    for (const entry of ['localhost:8080', 'localhost', '*.localhost', 'app.localhost:3000']) {
      expect(() => checkEgress({ allow: ['example.com', entry] }, 'config.sandbox.network')).toThrow(
        `config.sandbox.network.allow[1] "${entry}" can never be fetched: a localhost name always resolves to a loopback address, which the broker refuses for a host name; name the address instead (127.0.0.1 or [::1], with the port)`)
    }
  })

  it('refuses an entry written otherwise than URLs write it, which no URL would match', () => {
    expect(() => checkEgress({ allow: ['0177.0.0.1:80'] }, 'net')).toThrow('net.allow[0] "0177.0.0.1:80" can never be fetched: a URL writes that host as 127.0.0.1; write the entry that way')
    expect(() => checkEgress({ allow: ['[0:0:0:0:0:0:0:1]'] }, 'net')).toThrow('net.allow[0] "[0:0:0:0:0:0:0:1]" can never be fetched: a URL writes that host as [::1]; write the entry that way')
    expect(checkEgress({ allow: ['127.0.0.1:8080', '[::1]', 'API.example.com'] }, 'net').allow).toEqual(['127.0.0.1:8080', '[::1]', 'api.example.com'])
  })
})
