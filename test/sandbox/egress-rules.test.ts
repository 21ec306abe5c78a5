/**
 * The egress broker's rules, called directly with a resolver the test controls: what a name may
 * resolve to, how wildcards and ports match, and which addresses count as private. The end to
 * end path (a confined program, a real server) is in egress.test.ts.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ByteBudget } from '../../src/host/egress/byte-budget.js'
import { DNS_TIMEOUT_MS, type EgressOptions, checkEgress, egressNamespace, isPrivateAddress } from '../../src/host/egress/broker.js'
import { HostByteBudget } from '../../src/host/egress/host-budget.js'
import { PTC_FETCH_MAX_REQUEST_HEADERS, PTC_FETCH_METHODS } from '../../src/protocol/messages.js'
import { PtcCallRefusal } from '../../src/seam/refusal.js'
import { RELEASE_ON_WRITE } from '../../src/seam/release-on-write.js'
import type { SandboxEgress } from '../../src/seam/types.js'

/** Fetches `url` through a broker for `egress` whose resolver answers `addresses` for every name (or never, without them). */
async function fetchThrough(egress: SandboxEgress, url: string, addresses?: string[]): Promise<unknown> {
  const namespace = egressNamespace(egress, {
    lookup: (host) => (addresses === undefined ? new Promise(() => {}) : Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))),
  })
  const send = namespace.functions.send! as (args: unknown, call: { signal: AbortSignal }) => Promise<unknown>
  return send({ method: 'GET', url, headers: [] }, { signal: AbortSignal.timeout(5_000) })
}

describe('the egress broker refuses before connecting', () => {
  const allowed: SandboxEgress = { allow: ['*.example.com', 'api.github.com'] }

  it('refuses an allowed name whose DNS answer is loopback, without naming the address: no rebinding to the host, no map of its network', async () => {
    await expect(fetchThrough(allowed, 'https://api.example.com/', ['127.0.0.1'])).rejects.toThrow(
      'fetch to api.example.com refused: it resolves to a private, loopback or link-local address, and allow entry *.example.com is not an IP literal')
  })

  it('refuses when any one of the answers is private, IPv4-mapped ones included', async () => {
    for (const addresses of [['140.82.112.6', '::ffff:10.0.0.1'], ['169.254.169.254']]) {
      const message = await fetchThrough(allowed, 'https://api.github.com/', addresses).catch((error: Error) => error.message)
      expect(message).toMatch(/resolves to a private, loopback or link-local address/)
      expect(message).not.toContain(addresses.at(-1))
    }
  })

  it('fails a fetch whose name does not resolve within DNS_TIMEOUT_MS, naming the time', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const outcome = fetchThrough(allowed, 'https://api.github.com/').catch((error: Error) => error.message)
      await vi.advanceTimersByTimeAsync(DNS_TIMEOUT_MS)
      expect(await outcome).toBe(`fetch to api.github.com failed: the name did not resolve within ${DNS_TIMEOUT_MS / 1000} s`)
    } finally {
      vi.useRealTimers()
    }
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
/** An environment's budget of `environment` bytes on a host's of `host`, alone there. */
function budgetsOf(environment: number, host: number) {
  return { environment: new ByteBudget(environment, 'maxFetchBytesInFlight'), host: new HostByteBudget(host, 'maxHostFetchBytesInFlight') }
}

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
    if (request.url === '/authorized') return void response.writeHead(200).end(request.headers.authorization === undefined ? 'no' : 'yes')
    if (request.url === '/gzip-second') return void response.writeHead(200, { 'content-encoding': 'identity, gzip' }).end(gzipSync(sent))
    // The token of the authorization header sent, in a redirect's Location (`?pre=…&post=…` around it, or percent-encoded) or a header's name.
    const url = new URL(request.url!, 'http://x')
    const token = String(request.headers.authorization).split(' ').pop()!
    const around = (text: string) => `${url.searchParams.get('pre') ?? ''}${text}${url.searchParams.get('post') ?? ''}`
    if (url.pathname === '/locate') return void response.writeHead(302, { location: around(token) }).end()
    if (url.pathname === '/locate-encoded') return void response.writeHead(302, { location: around([...Buffer.from(token)].map((byte) => `%${byte.toString(16)}`).join('')) }).end()
    if (url.pathname === '/named') return void response.writeHead(200, { [`x-${token}`]: '1' }).end('ok')
    // An answer that never comes: a switch of protocols, or an informational status and the end of the connection.
    if (url.pathname === '/switch') return void request.socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n')
    if (url.pathname === '/hint') return void request.socket.end('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n')
    if (url.pathname === '/odd-status') return void request.socket.end('HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n')
    if (url.pathname === '/bad-location') return void response.writeHead(302, { location: 'http://[' }).end()
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
  // Capitals: a URL's host and scheme come back lowercased.
  const SECRET = 'Bearer S3cret-Token-of-the-host'
  beforeAll(async () => {
    echo = await echoServer()
  })
  afterAll(() => echo.server.close())

  const broker = (options: EgressOptions = {}, headers: Record<string, Record<string, string>> = { [echo.origin]: { authorization: SECRET } }) => {
    const namespace = egressNamespace({ allow: [echo.origin], headers }, options)
    return namespace.functions.send! as (args: unknown, call: { signal: AbortSignal }) => Promise<{ body: string; headers: [string, string][]; url: string }>
  }
  const request = (path: string, extra: object = {}) => ({ method: 'GET', url: `http://${echo.origin}${path}`, headers: [], ...extra })
  /** What `send` made of `args`: its answer as JSON, or its failure's message. */
  const outcome = (send: ReturnType<typeof broker>, args: unknown) => send(args, { signal: AbortSignal.timeout(5_000) }).then((answer) => JSON.stringify(answer), (error: Error) => error.message)

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
      const answer = await outcome(send, request(path, { headers }))
      expect(answer.toLowerCase(), path).not.toContain('s3cret')
      expect(answer, path).toMatch(new RegExp(`^fetch to ${echo.origin.replace(/\./g, '\\.')} refused: the answer (carries|is encoded)`))
    }
  })

  it('refuses an answer whose second content coding is not identity', async () => {
    expect(await outcome(broker(), request('/gzip-second'))).toBe(`fetch to ${echo.origin} refused: the answer is encoded (gzip), and the broker must read it to keep the headers it adds for this host from the program`)
  })

  it('refuses an answer that carries an injected value in a header name', async () => {
    expect(await outcome(broker(), request('/named'))).toBe(`fetch to ${echo.origin} refused: the answer carries the value of the authorization header the host adds for it, which never reaches the program`)
  })

  it("refuses a redirect whose Location carries an injected value, as written, resolved, percent-encoded or lowercased, before following or quoting it", async () => {
    const send = broker()
    const refusal = `fetch to ${echo.origin} refused: the Location it redirected to carries the value of the authorization header the host adds for it, which never reaches the program`
    const locations = [
      ['/locate?pre=/p/', 'follow'], // same origin: it would be the answer's url
      ['/locate?pre=/p/', 'manual'],
      ['/locate-encoded?pre=/p/', 'follow'],
      ['/locate?pre=http://&post=.evil.test/', 'follow'], // a refused host
      ['/locate?post=://x/', 'follow'], // a refused scheme
      ['/locate?pre=http://127.0.0.1:&post=/', 'follow'], // not a URL at all
    ] as const
    for (const [path, redirect] of locations) expect(await outcome(send, request(path, { redirect })), `${path} ${redirect}`).toBe(refusal)
  })

  it('refuses a redirect to a Location that is not a URL, naming the rule rather than quoting Node', async () => {
    expect(await outcome(broker(), request('/bad-location'))).toBe(`fetch to ${echo.origin} refused: it redirected (status 302) to a Location that is not a URL`)
  })

  it('fails at once a fetch answered by a switch of protocols, or by an informational status and the end of the connection', async () => {
    const send = broker()
    const started = Date.now()
    expect(await outcome(send, request('/switch'))).toBe(`fetch to ${echo.origin} failed: the server switched protocols (status 101), which fetch does not support`)
    expect(await outcome(send, request('/hint'))).toMatch(new RegExp(`^fetch to ${echo.origin.replace(/\./g, '\\.')} failed: `))
    expect(Date.now() - started).toBeLessThan(2_000)
  })

  it('fails a fetch answered with a status a Response cannot carry, naming it and the range', async () => {
    expect(await outcome(broker(), request('/odd-status'))).toBe(`fetch to ${echo.origin} failed: the server answered status 999, outside the 200-599 a Response can carry`)
  })

  it('refuses a request header Node would not send, naming it and the rule, before connecting', async () => {
    echo.methods.length = 0
    const send = broker()
    expect(await outcome(send, request('/', { headers: [['x y', '1']] }))).toBe(`fetch: request header "x y" is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~ only)`)
    expect(await outcome(send, request('/', { headers: [['x-y', 'a\nb']] }))).toBe('fetch: request header "x-y" has a value with a character HTTP does not allow (a control character or one past U+00FF)')
    expect(echo.methods).toEqual([])
  })

  it('refuses more than PTC_FETCH_MAX_REQUEST_HEADERS headers, 64 KiB of them or a 64 KiB URL before walking them, without holding the host', async () => {
    echo.methods.length = 0
    const send = broker()
    const refusal = `fetch: the request may have at most ${PTC_FETCH_MAX_REQUEST_HEADERS} headers, of at most 65536 bytes of names and values together`
    const many = Array.from({ length: 900_000 }, (_, index) => [`x${index}`, ''])
    const started = performance.now()
    expect(await outcome(send, request('/', { headers: many }))).toBe(refusal)
    expect(performance.now() - started).toBeLessThan(500)
    expect(await outcome(send, request('/', { headers: [['x-big', 'a'.repeat(65_536)]] }))).toBe(refusal)
    expect(await outcome(send, request(`/${'a'.repeat(65_536)}`))).toMatch(/^fetch: the URL has 65\d{3} characters, over the cap of 65536$/)
    expect(echo.methods).toEqual([])
  })

  it("never sends a program's TE header", async () => {
    const send = egressNamespace({ allow: [echo.origin] }).functions.send! as ReturnType<typeof broker>
    const answer = await send(request('/', { headers: [['te', 'trailers'], ['x-mine', 'yes']] }), { signal: AbortSignal.timeout(5_000) })
    const seen = JSON.parse(Buffer.from(answer.body, 'base64').toString()) as Record<string, string>
    expect(seen['x-mine']).toBe('yes')
    expect(seen.te).toBeUndefined()
  })

  it('injects the headers of an entry naming the host alone only over https, and those of an entry naming its port over http too', async () => {
    const authorized = async (headers: Record<string, Record<string, string>>) => {
      const answer = await broker({}, headers)(request('/authorized'), { signal: AbortSignal.timeout(5_000) })
      return Buffer.from(answer.body, 'base64').toString()
    }
    expect(await authorized({ '127.0.0.1': { authorization: SECRET } })).toBe('no')
    expect(await authorized({ [echo.origin]: { authorization: SECRET } })).toBe('yes')
  })

  it('fails a fetch whose server sends nothing for the idle timeout, and gives its bytes back', async () => {
    const budgets = budgetsOf(1024 * 1024, 1024 * 1024)
    const started = Date.now()
    expect(await outcome(broker({ budgets, idleTimeoutMs: 300 }), request('/hold/1000'))).toBe(`fetch to ${echo.origin} failed: no byte arrived for 0.3 s (the idle timeout of a fetch)`)
    expect(Date.now() - started).toBeLessThan(2_000)
    expect([budgets.environment.used, budgets.host.used]).toEqual([0, 0])
    echo.finishHeld()
  })

  it('keeps an answer\'s bytes charged until the reply carrying it is written (RELEASE_ON_WRITE), then gives them back once', async () => {
    const budgets = budgetsOf(1024 * 1024, 1024 * 1024)
    const answer = await broker({ budgets })(request('/bytes/1000'), { signal: AbortSignal.timeout(5_000) })
    expect([budgets.environment.used, budgets.host.used]).toEqual([1000, 1000])
    const release = RELEASE_ON_WRITE.get(answer)!
    release()
    release()
    expect([budgets.environment.used, budgets.host.used]).toEqual([0, 0])
  })

  it('caps the bytes of all fetches in flight per environment and per host, naming the budget', async () => {
    const host = new HostByteBudget(12 * 1024 * 1024, 'maxHostFetchBytesInFlight')
    const environment = () => new ByteBudget(6 * 1024 * 1024, 'maxFetchBytesInFlight')
    const signal = AbortSignal.timeout(10_000)
    const four = request(`/hold/${4 * 1024 * 1024}`)
    /** Starts each fetch; the first to settle is a refusal, since the others wait for `finishHeld`. */
    const race = async (sends: ReturnType<typeof broker>[]) => {
      // Each answer is released as the run's dispatcher would once its reply is written.
      const outcomes = sends.map((send) => send(four, { signal }).then((answer) => (RELEASE_ON_WRITE.get(answer)!(), 'answered'), (error: Error) => error.message))
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
