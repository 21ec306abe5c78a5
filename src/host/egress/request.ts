/**
 * The program's `fetch` request as the egress broker receives it, serialized by the worker
 * (src/worker/fetch.ts) and checked again here: the program can post the broker's call itself,
 * so it is hostile input like every call's arguments. The caps are checked before the headers
 * are walked: a call's argument may hold about a million header pairs.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http'
import {
  PTC_FETCH_MAX_REQUEST_HEADERS,
  PTC_FETCH_MAX_REQUEST_HEADER_BYTES,
  PTC_FETCH_MAX_URL_LENGTH,
  fetchHeadersRefusal,
  fetchMethodRefusal,
  fetchUrlRefusal,
  isFetchMethod,
} from '../../protocol/messages.js'
import { PtcCallRefusal } from '../../seam/refusal.js'

/** What the program sends: `fetch`'s request, serialized by the worker. */
export interface EgressRequest {
  method: string
  url: string
  headers: [string, string][]
  body?: string
  /** The request's redirect mode: `follow` (re-checked per hop), `manual` (the 3xx is the answer) or `error`. */
  redirect: RedirectMode
}

export type RedirectMode = 'follow' | 'manual' | 'error'
const REDIRECT_MODES: readonly string[] = ['follow', 'manual', 'error'] satisfies RedirectMode[]

/** The worker's request, re-checked. */
export function checkRequest(args: unknown): EgressRequest {
  const { method, url, headers, body, redirect = 'follow' } = (typeof args === 'object' && args !== null ? args : {}) as Record<string, unknown>
  if (typeof method !== 'string' || !/^[A-Za-z]{1,20}$/.test(method)) throw new PtcCallRefusal('fetch: the request method must be a token')
  if (!isFetchMethod(method)) throw new PtcCallRefusal(fetchMethodRefusal(method))
  if (typeof url === 'string' && url.length > PTC_FETCH_MAX_URL_LENGTH) throw new PtcCallRefusal(fetchUrlRefusal(url.length))
  if (typeof url !== 'string' || !URL.canParse(url)) throw new PtcCallRefusal(`fetch: invalid URL ${JSON.stringify(url)}`)
  if (!Array.isArray(headers)) throw new PtcCallRefusal('fetch: the request headers must be [name, value] pairs')
  if (headers.length > PTC_FETCH_MAX_REQUEST_HEADERS) throw new PtcCallRefusal(fetchHeadersRefusal())
  let bytes = 0
  for (const pair of headers as unknown[]) {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string') {
      throw new PtcCallRefusal('fetch: the request headers must be [name, value] pairs')
    }
    const [name, value] = pair as [string, string]
    bytes += name.length + value.length
    if (bytes > PTC_FETCH_MAX_REQUEST_HEADER_BYTES) throw new PtcCallRefusal(fetchHeadersRefusal())
    const fault = headerFault(name, value)
    if (fault !== undefined) throw new PtcCallRefusal(`fetch: request header ${JSON.stringify(name)} ${fault}`)
  }
  if (body !== undefined && typeof body !== 'string') throw new PtcCallRefusal('fetch: the request body must be base64')
  if (typeof redirect !== 'string' || !REDIRECT_MODES.includes(redirect)) throw new PtcCallRefusal(`fetch: the redirect mode must be one of ${REDIRECT_MODES.join(', ')}`)
  return { method, url, headers: headers as [string, string][], redirect: redirect as RedirectMode, ...(body === undefined ? {} : { body }) }
}

/**
 * Why Node would refuse to send header `name` with `value` (as an error thrown when the request
 * is made, which would reach the program bare), or undefined when it would send it.
 */
export function headerFault(name: string, value: string): string | undefined {
  try {
    validateHeaderName(name)
  } catch {
    return 'is not a valid header name (letters, digits and !#$%&\'*+-.^_`|~ only)'
  }
  try {
    validateHeaderValue(name, value)
  } catch {
    return 'has a value with a character HTTP does not allow (a control character or one past U+00FF)'
  }
  return undefined
}
