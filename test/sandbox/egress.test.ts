/**
 * Brokered egress: a policy that names hosts gives the program a `fetch` that goes through the
 * host, and nothing else. The server here is real, on the host's loopback, where a confined
 * helper (a network namespace of its own) cannot connect; only the broker can, and only when
 * an allow entry names the address.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, tempDirectory } from '../helpers/sandbox.js'

interface Seen {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** A server that records each request and answers by path: a greeting, an echo, redirects. */
async function serve(): Promise<{ server: http.Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = http.createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body })
      if (request.url === '/redirect') return response.writeHead(302, { location: '/hello' }).end()
      if (request.url === '/away') return response.writeHead(302, { location: 'http://127.0.0.2:9/' }).end()
      if (request.url === '/slow') return void setTimeout(() => response.writeHead(200).end('late'), 2000)
      // `/late/MS`: 4 MiB, after MS milliseconds.
      const late = /^\/late\/(\d+)$/.exec(request.url!)
      if (late) return void setTimeout(() => response.writeHead(200).end(Buffer.alloc(4 * 1024 * 1024, 120)), Number(late[1]))
      if (request.url === '/locate') return response.writeHead(302, { location: `/p/${request.headers.authorization?.split(' ').pop()}` }).end()
      if (request.url === '/headers') return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(request.headers))
      if (request.url === '/echo') return response.writeHead(201, { 'content-type': 'text/plain', 'x-served': 'yes' }).end(`got ${body}`)
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hello: 'from the host' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port, seen }
}

/** A program that runs `body` and returns what it resolved, or the rejection's class and message. */
const attempt = (body: string) => `try { return await (async () => { ${body} })() } catch (error) { return { rejected: error.constructor.name, message: error.message } }`

describe.skipIf(!bwrap)('brokered egress: fetch through the host to allowed hosts only', () => {
  const temp = tempDirectory('ptc-egress')
  let host: Awaited<ReturnType<typeof serve>>
  let env: Awaited<ReturnType<typeof startRuntime>>
  let origin: string

  beforeAll(async () => {
    host = await serve()
    origin = `127.0.0.1:${host.port}`
    env = await startRuntime({
      sandbox: { mode: 'workspace-write', network: { allow: [origin], headers: { [origin]: { authorization: 'Bearer host-secret' } } } },
    })
  })
  afterAll(async () => {
    await env?.dispose()
    host?.server.close()
    temp.remove()
  })

  const policy = (network: unknown) => ({ sandboxPolicy: { mode: 'workspace-write', workspaceRoot: temp.dir, network } as never })

  it('a direct connection fails while the brokered fetch reaches the server, which sees the injected header', async () => {
    host.seen.length = 0
    const result = await env.run(`
      const net = await import('node:net')
      const direct = await new Promise((resolve) => net.connect(${host.port}, '127.0.0.1').on('connect', () => resolve('connected')).on('error', (error) => resolve(error.code)))
      const response = await fetch('http://${origin}/hello', { headers: { authorization: 'mine', 'x-program': 'yes' } })
      return { direct, status: response.status, ok: response.ok, type: response.headers.get('content-type'), json: await response.json(), url: response.url }`)
    expect(result.value).toEqual({ direct: 'ECONNREFUSED', status: 200, ok: true, type: 'application/json', json: { hello: 'from the host' }, url: `http://${origin}/hello` })
    expect(host.seen).toHaveLength(1)
    expect(host.seen[0]!.headers).toMatchObject({ authorization: 'Bearer host-secret', 'x-program': 'yes' })
    expect(result.sandbox).toEqual({ mode: 'workspace-write', network: 'brokered', denied: false, enforcement: 'full' })
    expect(result.calls.map((call) => `${call.tool} ${call.outcome}`)).toEqual(['fetch.send ok'])
    expect(env.runtime.executionInstructions).toContain(`Only fetch() reaches the network, and only these hosts: ${origin}`)
  })

  it('leaves subprocesses without network: only the program\'s fetch goes out', async () => {
    host.seen.length = 0
    const script = `require('net').connect(${host.port}, '127.0.0.1').on('connect', () => process.stdout.write('connected')).on('error', (e) => process.stdout.write(e.code))`
    const result = await env.run(`const cp = await import('node:child_process')
      return cp.execFileSync(process.execPath, ['-e', ${JSON.stringify(script)}], { encoding: 'utf8' })`)
    expect(result.value).toBe('ECONNREFUSED')
    expect(host.seen).toHaveLength(0)
  })

  it('sends the method and body bytes and returns status, headers and body', async () => {
    host.seen.length = 0
    const result = await env.run(`
      const response = await fetch('http://${origin}/echo', { method: 'POST', body: new Uint8Array([104, 105]) })
      return { status: response.status, served: response.headers.get('x-served'), text: await response.text() }`)
    expect(result.value).toEqual({ status: 201, served: 'yes', text: 'got hi' })
    expect(host.seen[0]).toMatchObject({ method: 'POST', body: 'hi' })
  })

  // Not Buffer: Node's own Response reads the global Buffer when a body is consumed.
  it('keeps working after the program replaced Request, Response and Headers', async () => {
    const result = await env.run(`const response = await fetch('http://${origin}/hello')
      globalThis.Request = globalThis.Response = globalThis.Headers = null
      const again = await fetch('http://${origin}/hello')
      return [response.status, again.status, (await again.json()).hello]`)
    expect(result.value).toEqual([200, 200, 'from the host'])
  })

  // Node's fetch classes are read at the first fetch (web-fetch.ts), through Node's own getters.
  it('fetches with Node\'s classes when the program replaced them before its first fetch, and leaves its replacements in place', async () => {
    const result = await env.run(`globalThis.Request = 'mine'
      Object.defineProperty(globalThis, 'Response', { value: 'mine', writable: false, configurable: false })
      delete globalThis.Headers
      const response = await fetch('http://${origin}/hello')
      return [response.status, (await response.json()).hello, globalThis.Request, globalThis.Response, 'Headers' in globalThis]`)
    expect(result.value).toEqual([200, 'from the host', 'mine', 'mine', false])
  })

  it('follows a redirect to an allowed host, checking it again', async () => {
    const result = await env.run(`const response = await fetch('http://${origin}/redirect')
      return { redirected: response.redirected, url: response.url, json: await response.json() }`)
    expect(result.value).toEqual({ redirected: true, url: `http://${origin}/hello`, json: { hello: 'from the host' } })
  })

  it("answers a redirect as it is under redirect: 'manual', and rejects it under 'error'", async () => {
    host.seen.length = 0
    const result = await env.run(`const manual = await fetch('http://${origin}/redirect', { redirect: 'manual' })
      const refused = await fetch('http://${origin}/redirect', { redirect: 'error' }).then(() => 'followed', (error) => error.constructor.name + ': ' + error.message)
      return { status: manual.status, location: manual.headers.get('location'), redirected: manual.redirected, refused }`)
    expect(result.value).toEqual({
      status: 302,
      location: '/hello',
      redirected: false,
      refused: `TypeError: fetch to http://${origin}/redirect failed: it redirected (status 302) and the request's redirect mode is 'error'`,
    })
    expect(host.seen.map((request) => request.url)).toEqual(['/redirect', '/redirect'])
  })

  it("stops waiting when the request's signal aborts, with the signal's reason, and refuses an aborted signal at once", async () => {
    host.seen.length = 0
    const result = await env.run(`const started = Date.now()
      const timed = await fetch('http://${origin}/slow', { signal: AbortSignal.timeout(200) }).then(() => 'answered', (error) => error.name)
      const waited = Date.now() - started
      const early = await fetch('http://${origin}/hello', { signal: AbortSignal.abort('no') }).then(() => 'answered', (error) => error)
      return { timed, quick: waited < 1500, early }`)
    expect(result.value).toEqual({ timed: 'TimeoutError', quick: true, early: 'no' })
    expect(host.seen.map((request) => request.url)).toEqual(['/slow'])
  })

  it('refuses a host, a port and a redirect the allow list does not name, with a TypeError naming the host and the rule', async () => {
    const refused = async (url: string) => (await env.run(attempt(`return await fetch(${JSON.stringify(url)})`))).value
    expect(await refused('http://127.0.0.2:9/')).toEqual({ rejected: 'TypeError', message: `fetch to 127.0.0.2:9 refused: host 127.0.0.2:9 is not in the network allow list (${origin})` })
    expect(await refused(`http://127.0.0.1:${host.port + 1}/`)).toMatchObject({ rejected: 'TypeError', message: expect.stringMatching(/not in the network allow list/) })
    expect(await refused(`https://${origin}/`)).toMatchObject({ rejected: 'TypeError' }) // allowed host, but no TLS there: fails, never reaches another host
    const away = await refused(`http://${origin}/away`)
    expect(away).toEqual({ rejected: 'TypeError', message: `fetch to 127.0.0.2:9 refused: host 127.0.0.2:9 is not in the network allow list (${origin}) (a redirect from ${origin})` })
  })

  it('refuses a localhost allow entry when the request is resolved, since every fetch through it would be refused', () => {
    expect(() => env.runtime.resolve({ program: '', bindings: [], ...policy({ allow: [`localhost:${host.port}`] }) })).toThrow(
      `sandboxPolicy.network.allow[0] "localhost:${host.port}" can never be fetched: a localhost name always resolves to a loopback address, which the broker refuses for a host name; name the address instead (127.0.0.1 or [::1], with the port)`)
  })

  it('refuses a localhost allow entry in the configuration when the runtime starts', async () => {
    await expect(startRuntime({ sandbox: { mode: 'workspace-write', network: { allow: ['localhost:8080'] } } })).rejects.toThrow(/allow\[0\] "localhost:8080" can never be fetched: a localhost name always resolves to a loopback address/)
  })

  it('refuses an answer that echoes the injected header: the secret never reaches the program', async () => {
    const result = await env.run(attempt(`const response = await fetch('http://${origin}/headers', { headers: { 'accept-encoding': 'gzip' } }); return await response.text()`))
    expect(result.value).toEqual({ rejected: 'TypeError', message: `fetch to ${origin} refused: the answer carries the value of the authorization header the host adds for it, which never reaches the program` })
    expect(JSON.stringify(result)).not.toContain('host-secret')
    expect(host.seen.at(-1)!.headers['accept-encoding']).toBe('identity')
  })

  it('refuses a redirect whose Location carries the injected header: the secret reaches neither the program nor the call trace', async () => {
    const result = await env.run(attempt(`const response = await fetch('http://${origin}/locate'); return response.url`))
    expect(result.value).toEqual({ rejected: 'TypeError', message: `fetch to ${origin} refused: the Location it redirected to carries the value of the authorization header the host adds for it, which never reaches the program` })
    expect(result.calls.map((call) => call.outcome)).toEqual(['refused'])
    expect(JSON.stringify(result)).not.toContain('host-secret')
  })

  it('refuses more headers than the cap, and a longer URL, in the program, naming the rule, without calling the broker', async () => {
    const result = await env.run(`const refused = (promise) => promise.then(() => 'sent', (error) => error.constructor.name + ': ' + error.message)
      const headers = Object.fromEntries(Array.from({ length: 257 }, (_, index) => ['x-' + index, '1']))
      return [await refused(fetch('http://${origin}/hello', { headers })), await refused(fetch('http://${origin}/' + 'a'.repeat(65536)))]`)
    expect(result.value).toEqual([
      'TypeError: fetch: the request may have at most 256 headers, of at most 65536 bytes of names and values together',
      `TypeError: fetch: the URL has ${`http://${origin}/`.length + 65_536} characters, over the cap of 65536`,
    ])
    expect(result.calls).toEqual([])
  })

  // A program that stops reading its replies leaves them unwritten; their bytes stay charged to
  // maxFetchBytesInFlight (16 MiB), so the host holds four 4 MiB answers for it, not six.
  it("keeps a fetch's bytes charged until its reply is written, so a program that does not read its replies gets no more", async () => {
    const result = await env.run(`const outcomes = Array.from({ length: 6 }, (_, index) => fetch('http://${origin}/late/' + (300 + index * 200)).then((response) => response.status, (error) => error.message))
      await new Promise((resolve) => setTimeout(resolve, 50)) // the calls go out
      const started = Date.now()
      while (Date.now() - started < 2500) {}
      return await Promise.all(outcomes)`)
    const outcomes = result.value as unknown[]
    expect(outcomes.filter((outcome) => outcome === 200)).toHaveLength(4)
    expect(outcomes.filter((outcome) => typeof outcome === 'string' && /maxFetchBytesInFlight/.test(outcome))).toHaveLength(2)
  })

  it('gives the bytes of replies never written back to the host when the run ends', async () => {
    const small = await startRuntime({ maxHostFetchBytesInFlight: 8 * 1024 * 1024, sandbox: { mode: 'workspace-write', network: { allow: [origin] } } })
    try {
      // Ends while its two answers are charged and unread: the host's whole budget.
      const first = await small.run(`for (const delay of [100, 200]) fetch('http://${origin}/late/' + delay).catch(() => {})
        await new Promise((resolve) => setTimeout(resolve, 50))
        const started = Date.now()
        while (Date.now() - started < 1000) {}
        return 'left'`)
      expect(first.value).toBe('left')
      const second = await small.run(`return await Promise.all([0, 0].map(() => fetch('http://${origin}/late/0').then((response) => response.status, (error) => error.message)))`)
      expect(second.value).toEqual([200, 200])
    } finally {
      await small.dispose()
    }
  })

  it("refuses a method outside the broker's list in the program, with the same words the broker uses", async () => {
    host.seen.length = 0
    const result = await env.run(attempt(`return await fetch('http://${origin}/hello', { method: 'PROPFIND' })`))
    expect(result.value).toEqual({ rejected: 'TypeError', message: 'fetch: method "PROPFIND" is not allowed; the methods are GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS' })
    expect(result.calls).toEqual([])
    expect(host.seen).toHaveLength(0)
  })

  it('keeps the injected headers out of the program: a request to an allowed host without them carries none', async () => {
    host.seen.length = 0
    const result = await env.run(`return (await fetch('http://${origin}/hello')).status`, policy({ allow: [origin] }))
    expect(result.value).toBe(200)
    expect(host.seen[0]!.headers.authorization).toBeUndefined()
  })

  it('rejects malformed allow entries and egress without confinement, naming the field', () => {
    const resolve = (sandboxPolicy: unknown) => env.runtime.resolve({ program: '', bindings: [], sandboxPolicy: sandboxPolicy as never })
    expect(() => resolve({ mode: 'read-only', workspaceRoot: temp.dir, network: { allow: ['https://api.github.com/'] } })).toThrow(/sandboxPolicy\.network\.allow\[0\] must be a host name, "\*\.domain" or an IP literal, with an optional :port, got "https:\/\/api\.github\.com\/"/)
    expect(() => resolve({ mode: 'read-only', workspaceRoot: temp.dir, network: { allow: [] } })).toThrow(/sandboxPolicy\.network\.allow must be a non-empty array/)
    expect(() => resolve({ mode: 'danger-full-access', workspaceRoot: temp.dir, network: { allow: ['example.com'] } })).toThrow(/cannot name hosts under danger-full-access/)
  })
})
