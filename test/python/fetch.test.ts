/**
 * Brokered egress from Python: under a network policy that names hosts, a Python program's
 * `await fetch(...)` goes through the host's broker as JavaScript's `fetch` does (the same
 * checks, the same injected headers, the same trace), and a refused request raises
 * ConnectionError with the broker's reason. The server is on the host's loopback, which a
 * confined helper cannot reach by itself.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap } from '../helpers/sandbox.js'

const SLOW = { timeout: 240_000 }

async function serve() {
  const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = []
  const server = http.createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body })
      if (request.url === '/echo') return response.writeHead(201, { 'content-type': 'text/plain', 'x-served': 'yes' }).end(`got ${body}`)
      if (request.url === '/bytes') return response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 255, 1]))
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hello: 'from the host' }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, port: (server.address() as AddressInfo).port, seen }
}

describe.skipIf(!bwrap)('fetch from Python under brokered egress', () => {
  let host: Awaited<ReturnType<typeof serve>>
  let env: Awaited<ReturnType<typeof startRuntime>>
  let origin: string
  const run = (program: string) => env.run(program, { timeoutMs: 90_000 })
  beforeAll(async () => {
    host = await serve()
    origin = `127.0.0.1:${host.port}`
    env = await startRuntime({
      language: 'python',
      poolSize: 1,
      sandbox: { mode: 'workspace-write', network: { allow: [origin], headers: { [origin]: { authorization: 'Bearer host-secret' } } } },
    })
  }, 240_000)
  afterAll(async () => {
    await env?.dispose()
    host?.server.close()
  })

  it('reaches an allowed host through the broker, which injects its header, and reads status, headers and JSON', SLOW, async () => {
    host.seen.length = 0
    const result = await run(`response = await fetch("http://${origin}/hello", headers={"authorization": "mine", "x-program": "yes"})
return [response.status, response.ok, response.headers["content-type"], response.json(), response.url]`)
    expect(result.value).toEqual([200, true, 'application/json', { hello: 'from the host' }, `http://${origin}/hello`])
    expect(host.seen[0]!.headers).toMatchObject({ authorization: 'Bearer host-secret', 'x-program': 'yes' })
    expect(result.calls.map((call) => `${call.tool} ${call.outcome}`)).toEqual(['fetch.send ok'])
  })

  it('sends a JSON body or bytes, and reads text and bytes back', SLOW, async () => {
    host.seen.length = 0
    const result = await run(`posted = await fetch("http://${origin}/echo", method="POST", json={"n": 1})
raw = await fetch("http://${origin}/echo", method="PUT", body=b"\\x01\\x02")
data = await fetch("http://${origin}/bytes")
return [posted.status, posted.text, posted.headers["x-served"], raw.status, list(data.content)]`)
    expect(result.value).toEqual([201, 'got {"n":1}', 'yes', 201, [0, 255, 1]])
    expect(host.seen.map((seen) => [seen.method, seen.headers['content-type']])).toEqual([['POST', 'application/json'], ['PUT', undefined], ['GET', undefined]])
  })

  it('raises ConnectionError with the broker’s reason for a host outside the allow list', SLOW, async () => {
    const result = await run(`try:
    await fetch("http://127.0.0.2:9/")
except ConnectionError as error:
    return str(error)`)
    expect(result.value).toBe(`fetch to 127.0.0.2:9 refused: host 127.0.0.2:9 is not in the network allow list (${origin})`)
  })
})
