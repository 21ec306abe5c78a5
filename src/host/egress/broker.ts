/**
 * Brokered egress: the host side of the program's `fetch` under a network policy that names
 * hosts (`network: { allow, headers }`). The helper keeps its own network namespace; the only
 * way out is this broker, reached as a binding call. It checks every request and every redirect
 * against the allow list, resolves each name once and connects to the address it checked (so a
 * second answer cannot rebind the name to a private address), and adds per-host headers the
 * program never sees.
 */
import { lookup as dnsLookup } from 'node:dns/promises'
import net from 'node:net'
import { PTC_FETCH_MAX_REQUEST_BODY_BYTES, type PtcFetchAnswer } from '../../protocol/messages.js'
import { PtcCallRefusal } from '../../seam/refusal.js'
import { RELEASE_ON_WRITE } from '../../seam/release-on-write.js'
import type { PtcBindingNamespace, PtcJsonValue, SandboxEgress } from '../../seam/types.js'
import { ByteBudget } from './byte-budget.js'
import { carried, echoIn, echoInText, secretsOf } from './echo.js'
import { DEFAULT_PORTS, type EgressBudgets, FETCH_IDLE_TIMEOUT_MS, MAX_RESPONSE_BODY_BYTES, exchange } from './exchange.js'
import { AbortFanOut } from './abort-fan-out.js'
import { HostByteBudget } from './host-budget.js'
import { type EgressRequest, checkRequest, headerFault } from './request.js'

/** The global the worker replaces with the program's `fetch` (a name no binding may take). */
export const EGRESS_GLOBAL = 'fetch'
/** Redirects followed per fetch, each checked like the first request. */
export const MAX_REDIRECTS = 5
/** How long a host name may take to resolve before its fetch fails. */
export const DNS_TIMEOUT_MS = 10_000
const REDIRECT_STATUSES = [301, 302, 303, 307, 308]

const ENTRY = /^(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/
/** Headers the broker sets itself from the request it makes. */
const OWN_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'te', 'keep-alive', 'upgrade'])
/** A program's headers that do not follow a redirect to another origin (as fetch does). */
const CREDENTIALS = new Set(['authorization', 'cookie', 'proxy-authorization'])

/** One allow entry: a host (or every subdomain of a suffix), the port it names, whether it is an IP literal. */
interface Rule {
  entry: string
  host: string
  wildcard: boolean
  port: number | undefined
  literal: boolean
}

/** Addresses a name may not resolve to: loopback, private, link-local, shared, multicast, unspecified. */
const PRIVATE = new net.BlockList()
for (const [prefix, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) {
  PRIVATE.addSubnet(prefix, bits, 'ipv4')
}
for (const [prefix, bits] of [['::', 127], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96]] as const) PRIVATE.addSubnet(prefix, bits, 'ipv6')

/** Whether `address` (an IP) is loopback, private, link-local or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address)
  if (family === 4) return PRIVATE.check(address, 'ipv4')
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4')
  return PRIVATE.check(address, 'ipv6')
}

/**
 * Checks a policy's `network` object and returns its canonical copy: allow entries are host
 * names, `*.` suffixes or IP literals, each with an optional port; header names are lowercased.
 */
export function checkEgress(network: Record<string, unknown>, field: string): SandboxEgress {
  const { allow, headers } = network
  if (!Array.isArray(allow) || allow.length === 0) throw new TypeError(`${field}.allow must be a non-empty array of host names, got ${JSON.stringify(allow)}`)
  const entries = allow.map((entry, index) => {
    if (typeof entry !== 'string') throw new TypeError(`${field}.allow[${index}] must be a string, got ${JSON.stringify(entry)}`)
    parseRule(entry, `${field}.allow[${index}]`)
    return entry.toLowerCase()
  })
  if (headers === undefined) return { allow: entries }
  if (typeof headers !== 'object' || headers === null) throw new TypeError(`${field}.headers must be an object of host → headers`)
  // Null prototypes: a host or header named `__proto__` is a key like any other.
  const copy: Record<string, Record<string, string>> = Object.create(null)
  for (const [host, values] of Object.entries(headers)) {
    if (typeof values !== 'object' || values === null) throw new TypeError(`${field}.headers[${JSON.stringify(host)}] must be an object of header → value`)
    const own: Record<string, string> = Object.create(null)
    for (const [name, value] of Object.entries(values)) {
      if (typeof value !== 'string') throw new TypeError(`${field}.headers[${JSON.stringify(host)}][${JSON.stringify(name)}] must be a string`)
      const fault = headerFault(name, value)
      if (fault !== undefined) throw new TypeError(`${field}.headers[${JSON.stringify(host)}][${JSON.stringify(name)}] ${fault}`)
      own[name.toLowerCase()] = value
    }
    copy[host.toLowerCase()] = own
  }
  return { allow: entries, headers: copy }
}

function parseRule(entry: string, field: string): Rule {
  const match = ENTRY.exec(entry.toLowerCase())
  const port = match?.[3] === undefined ? undefined : Number(match[3])
  if (!match || (port !== undefined && (port < 1 || port > 65_535))) {
    throw new TypeError(`${field} must be a host name, "*.domain" or an IP literal, with an optional :port, got ${JSON.stringify(entry)}`)
  }
  const host = match[2]!
  const literal = net.isIP(host.replace(/^\[|\]$/g, '')) !== 0
  if (match[1] && literal) throw new TypeError(`${field} cannot put a wildcard on an IP address, got ${JSON.stringify(entry)}`)
  refuseUnreachable(entry, host, field)
  return { entry: entry.toLowerCase(), host, wildcard: match[1] !== undefined, port, literal }
}

/**
 * Refuses an entry the broker would refuse at every fetch, so the deployer learns it when the
 * policy is checked: a localhost name (it always resolves to loopback, and a name may never
 * reach a private address), and a host a URL writes otherwise (`0177.0.0.1` is `127.0.0.1` to
 * a URL, `[0:0::1]` is `[::1]`), which no request's host would ever equal.
 */
function refuseUnreachable(entry: string, host: string, field: string): void {
  const never = `${field} ${JSON.stringify(entry)} can never be fetched`
  if (host === 'localhost' || host.endsWith('.localhost')) {
    throw new TypeError(`${never}: a localhost name always resolves to a loopback address, which the broker refuses for a host name; name the address instead (127.0.0.1 or [::1], with the port)`)
  }
  let written: string
  try {
    written = new URL(`http://${host}/`).hostname
  } catch {
    throw new TypeError(`${never}: no URL can name the host ${host}`)
  }
  if (written !== host) throw new TypeError(`${never}: a URL writes that host as ${written}; write the entry that way`)
}

/** What the host gives the broker beside the policy. */
export interface EgressOptions {
  /** A resolver in place of the system's (tests). */
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>
  /**
   * The byte budgets every response is charged to as it arrives: this environment's fetches in
   * flight, and the host's. Absent: a budget of one fetch's cap each (tests).
   */
  budgets?: EgressBudgets
  /** Milliseconds a fetch may go without a byte from its server; `FETCH_IDLE_TIMEOUT_MS` when absent (tests set less). */
  idleTimeoutMs?: number
}

/**
 * The namespace that serves the program's `fetch` under `egress`. Each call is one fetch:
 * request in, `{ status, statusText, headers, body, url, redirected }` out (the body base64).
 */
export function egressNamespace(egress: SandboxEgress, options: EgressOptions = {}): PtcBindingNamespace {
  const rules = egress.allow.map((entry) => parseRule(entry, 'allow'))
  const lookup = options.lookup ?? ((host: string) => dnsLookup(host, { all: true, verbatim: true }))
  const listed = egress.allow.join(', ')
  const budgets = options.budgets ?? oneFetchBudgets()
  // Every value the policy injects, for any host: none may come back in an answer.
  const secrets = secretsOf(egress.headers)
  const aborts = new AbortFanOut()
  const ruleFor = (url: URL): Rule => {
    const what = `fetch to ${url.host || url.href}`
    const defaultPort = DEFAULT_PORTS[url.protocol]
    if (defaultPort === undefined) throw new PtcCallRefusal(`${what} refused: scheme ${url.protocol} is not allowed (http: and https: only)`)
    const host = url.hostname
    const port = url.port === '' ? defaultPort : Number(url.port)
    const rule = rules.find((candidate) =>
      (candidate.wildcard ? host.endsWith(`.${candidate.host}`) : host === candidate.host) &&
      (candidate.port === undefined ? port === defaultPort : port === candidate.port))
    if (rule === undefined) throw new PtcCallRefusal(`${what} refused: host ${url.host} is not in the network allow list (${listed})`)
    return rule
  }
  const idleTimeoutMs = options.idleTimeoutMs ?? FETCH_IDLE_TIMEOUT_MS
  const addressFor = async (url: URL, rule: Rule): Promise<{ address: string; family: number }> => {
    const bare = url.hostname.replace(/^\[|\]$/g, '')
    // The deployer named this address: it is allowed even when private (a service on the host).
    if (rule.literal) return { address: bare, family: net.isIP(bare) }
    if (net.isIP(bare) !== 0) throw new PtcCallRefusal(`fetch to ${url.host} refused: an IP address is allowed only when an allow entry names it`)
    const answers = await resolveWithin(lookup(bare), `fetch to ${url.host} failed: the name did not resolve within ${DNS_TIMEOUT_MS / 1000} s`)
    if (answers.length === 0) throw new Error(`fetch to ${url.host} failed: the name did not resolve`)
    // The address itself is not named: it would tell the program about the host's network.
    if (answers.some((answer) => isPrivateAddress(answer.address))) {
      throw new PtcCallRefusal(`fetch to ${url.host} refused: it resolves to a private, loopback or link-local address, and allow entry ${rule.entry} is not an IP literal`)
    }
    return answers[0]!
  }
  /**
   * The headers the policy injects into a request to `url`: those of an entry naming its host and
   * port, on either scheme (a deployer's service on a port of its own), or those of an entry
   * naming the host alone, on https: only, so that a secret never crosses the network in clear.
   */
  const injectedFor = (url: URL): Record<string, string> => {
    const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port)
    return egress.headers?.[`${url.hostname}:${port}`] ?? (url.protocol === 'https:' ? egress.headers?.[url.hostname] : undefined) ?? {}
  }
  const send = async (args: unknown, { signal }: { signal: AbortSignal }): Promise<PtcJsonValue> => {
    const request = checkRequest(args)
    const own = aborts.follow(signal)
    try {
      return await fetchThrough(request, own.signal)
    } catch (error) {
      // A failure's message may quote what a server sent (Node's errors, a redirect's host).
      const header = echoInText(String((error as Error)?.message), secrets)
      if (header === undefined) throw error
      const message = `fetch to ${new URL(request.url).host} failed: its error ${carried(header)}`
      throw PtcCallRefusal.is(error) ? new PtcCallRefusal(message) : new Error(message)
    } finally {
      own.done()
    }
  }
  const fetchThrough = async (request: EgressRequest, signal: AbortSignal): Promise<PtcJsonValue> => {
    let url = new URL(request.url)
    let { method } = request
    let body = request.body === undefined ? undefined : Buffer.from(request.body, 'base64')
    if (body !== undefined && body.length > PTC_FETCH_MAX_REQUEST_BODY_BYTES) throw new PtcCallRefusal(`fetch: the request body has ${body.length} bytes, over the cap of ${PTC_FETCH_MAX_REQUEST_BODY_BYTES}`)
    let headers = request.headers.filter(([name]) => !OWN_HEADERS.has(name.toLowerCase()))
    // The body is searched for injected values as the program would read it: unencoded.
    if (secrets.length > 0) headers = [...headers.filter(([name]) => name.toLowerCase() !== 'accept-encoding'), ['accept-encoding', 'identity']]
    const origin = url.origin
    for (let redirects = 0; ; redirects++) {
      const rule = ruleFor(url)
      const pinned = await addressFor(url, rule)
      const injected = injectedFor(url)
      const outgoing: [string, string][] = headers.filter(([name]) => !Object.hasOwn(injected, name.toLowerCase()))
      for (const [name, value] of Object.entries(injected)) outgoing.push([name, value])
      const answer = await exchange(url, method, outgoing, body, { pinned, budgets, signal, idleTimeoutMs })
      const { location } = answer
      // Searched before it is followed, quoted or answered: the program could read it percent-decoded.
      const echo = (location === undefined ? undefined : echoedLocation(location)) ?? echoIn(answer, secrets)
      if (echo !== undefined) {
        answer.release()
        throw new PtcCallRefusal(`fetch to ${url.host} refused: ${echo}`)
      }
      if (location === undefined || !REDIRECT_STATUSES.includes(answer.status) || request.redirect === 'manual') {
        const reply: PtcFetchAnswer = { status: answer.status, statusText: answer.statusText, headers: answer.headers, body: answer.body.toString('base64'), url: url.href, redirected: redirects > 0 }
        // The body's bytes stay charged until the reply has left the host (the run's call dispatcher releases them).
        RELEASE_ON_WRITE.set(reply, answer.release)
        return reply as unknown as PtcJsonValue
      }
      answer.release()
      if (request.redirect === 'error') throw new Error(`fetch to ${request.url} failed: it redirected (status ${answer.status}) and the request's redirect mode is 'error'`)
      if (redirects === MAX_REDIRECTS) throw new Error(`fetch to ${request.url} failed: more than ${MAX_REDIRECTS} redirects`)
      if (!URL.canParse(location, url.href)) throw new PtcCallRefusal(`fetch to ${url.host} refused: it redirected (status ${answer.status}) to a Location that is not a URL`)
      const next = new URL(location, url)
      // What the program would read as `response.url`: the Location as the URL parser wrote it.
      const resolved = echoedLocation(next.href)
      if (resolved !== undefined) throw new PtcCallRefusal(`fetch to ${url.host} refused: ${resolved}`)
      try {
        ruleFor(next)
      } catch (error) {
        throw new PtcCallRefusal(`${(error as Error).message} (a redirect from ${url.host})`)
      }
      if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET'
        body = undefined
        headers = headers.filter(([name]) => !name.toLowerCase().startsWith('content-'))
      }
      if (next.origin !== origin) headers = headers.filter(([name]) => !CREDENTIALS.has(name.toLowerCase()))
      url = next
    }
  }
  /** Why a redirect's Location may not reach the program, or be followed. */
  const echoedLocation = (location: string): string | undefined => {
    const header = echoInText(location, secrets)
    return header === undefined ? undefined : `the Location it redirected to ${carried(header)}`
  }
  return { global: EGRESS_GLOBAL, functions: { send } }
}

/** A budget of one fetch's cap for an environment alone on its host (tests). */
function oneFetchBudgets(): EgressBudgets {
  return { environment: new ByteBudget(MAX_RESPONSE_BODY_BYTES, 'maxFetchBytesInFlight'), host: new HostByteBudget(MAX_RESPONSE_BODY_BYTES, 'maxHostFetchBytesInFlight') }
}

/** `pending`, or a failure with `message` once `DNS_TIMEOUT_MS` have passed (a lookup cannot be cancelled). */
function resolveWithin<T>(pending: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), DNS_TIMEOUT_MS)
  })
  return Promise.race([pending, late]).finally(() => clearTimeout(timer))
}
