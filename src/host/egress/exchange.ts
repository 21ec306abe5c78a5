/**
 * One HTTP exchange of the egress broker (`egress.ts`): the request goes to the address the
 * broker already checked and no other, and the answer's body is charged, chunk by chunk, to the
 * fetch's own cap and to the byte budgets of the environment and the host before it is kept.
 */
import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import type { ByteBudget } from './byte-budget.js'
import type { HostByteBudget } from './host-budget.js'

/** Bytes of a response body the program may receive; a longer body fails the fetch. */
export const MAX_RESPONSE_BODY_BYTES = 4 * 1024 * 1024

/**
 * Seconds a fetch may go without a byte from its server (while connecting, before the answer,
 * within its body) before it fails: a stalled answer would hold its bytes against the byte
 * budgets, the host's among them, until the run ends.
 */
export const FETCH_IDLE_TIMEOUT_MS = 30_000

export const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 }

/** An answer as the broker read it: its body is held against `budgets` until `release`. */
export interface Answer {
  status: number
  statusText: string
  headers: [string, string][]
  body: Buffer
  location: string | undefined
  /** Gives the body's bytes back to the budgets (once; later calls do nothing). */
  release(): void
}

/** The budgets an exchange charges: the environment's fetches in flight, and the host's. */
export interface EgressBudgets {
  environment: ByteBudget
  host: HostByteBudget
}

/** What an exchange needs beside the request: the pinned address, the budgets, an abort, the idle timeout. */
export interface ExchangeContext {
  pinned: { address: string; family: number }
  budgets: EgressBudgets
  signal: AbortSignal
  idleTimeoutMs: number
}

/** One HTTP exchange with `url`'s host at the address already checked, and no other. */
export function exchange(url: URL, method: string, headers: [string, string][], body: Buffer | undefined, { pinned, budgets, signal, idleTimeoutMs }: ExchangeContext): Promise<Answer> {
  const pin: LookupFunction = (_host, options, callback) => {
    if (options.all) (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [pinned])
    else callback(null, pinned.address, pinned.family)
  }
  // An object, not raw pairs: with raw pairs Node sends no Host header of its own.
  const flat: Record<string, string> = {}
  for (const [name, value] of headers) flat[name.toLowerCase()] = value
  let held = 0
  const release = () => {
    budgets.environment.give(held)
    budgets.host.give(held)
    held = 0
  }
  /** Charges `bytes` to both budgets, or names the one they would pass. */
  const charge = (bytes: number): string | undefined => {
    const { environment, host } = budgets
    if (!environment.take(bytes)) return `the responses of this environment's fetches in flight would pass ${environment.limit} bytes (${environment.option})`
    // The host's budget keeps each environment a floor however full it is (`host-budget.ts`).
    if (!host.take(bytes, environment)) {
      environment.give(bytes)
      return `the responses of all fetches in flight on this host would pass ${host.limit} bytes (${host.option})`
    }
    held += bytes
    return undefined
  }
  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (message: string) => {
      if (settled) return
      settled = true
      release()
      request.destroy()
      reject(new Error(`fetch to ${url.host} failed: ${message}`))
    }
    const client = url.protocol === 'https:' ? https : http
    const request = client.request({
      protocol: url.protocol,
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method,
      headers: flat,
      lookup: pin,
      agent: false,
      signal,
    }, (response) => {
      // The worker's Response would throw a bare RangeError for any other status.
      const status = response.statusCode ?? 0
      if (status < 200 || status > 599) {
        response.destroy()
        fail(`the server answered status ${status}, outside the 200-599 a Response can carry`)
        return
      }
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        const over = size > MAX_RESPONSE_BODY_BYTES ? `the response body exceeds the cap of ${MAX_RESPONSE_BODY_BYTES} bytes` : charge(chunk.length)
        if (over !== undefined) {
          response.destroy()
          fail(over)
          return
        }
        chunks.push(chunk)
      })
      response.on('error', (error) => fail(error.message))
      response.on('end', () => {
        const pairs: [string, string][] = []
        const raw = response.rawHeaders
        for (let index = 0; index + 1 < raw.length; index += 2) pairs.push([raw[index]!, raw[index + 1]!])
        const location = response.headers.location
        settled = true
        resolve({ status, statusText: response.statusMessage ?? '', headers: pairs, body: Buffer.concat(chunks), location, release })
      })
    })
    request.on('error', (error) => fail(error.message))
    // Without these, a 101 answer, or a 1xx followed by the end of the connection, would leave
    // the fetch waiting until the run ends.
    request.on('upgrade', (_response, socket) => {
      socket.destroy()
      fail('the server switched protocols (status 101), which fetch does not support')
    })
    request.on('close', () => fail('the connection closed before the answer ended'))
    request.setTimeout(idleTimeoutMs, () => fail(`no byte arrived for ${idleTimeoutMs / 1000} s (the idle timeout of a fetch)`))
    request.end(body)
  })
}
