/**
 * The program's `fetch` under brokered egress. The helper has no network of its own, so this
 * `fetch` serializes the request (method, URL, headers, body bytes) into one binding call to
 * the host's broker (`src/host/egress/broker.ts`), which checks and makes it, and builds a `Response`
 * here from the answer (status, headers, body bytes). A refusal rejects with a `TypeError`, as
 * Node's `fetch` does when a request cannot be made.
 *
 * Only the program calls this function: a program that patched `Request`, `Response` or
 * `Buffer` internals breaks its own fetches, never the runtime. Replacing the globals themselves
 * changes nothing here (except `Buffer`: Node's own `Response` reads the global one when a body
 * is consumed): Node's classes are captured through their lazy getters (web-fetch.ts), which
 * load Node's fetch implementation only when a program first fetches.
 */
import {
  type PtcFetchAnswer,
  PTC_FETCH_MAX_REQUEST_BODY_BYTES,
  PTC_FETCH_MAX_REQUEST_HEADERS,
  PTC_FETCH_MAX_REQUEST_HEADER_BYTES,
  PTC_FETCH_MAX_URL_LENGTH,
  fetchHeadersRefusal,
  fetchMethodRefusal,
  fetchUrlRefusal,
  isFetchMethod,
} from '../protocol/messages.js'
import { ErrorOf, PromiseOf, StringOf, TypeErrorOf, create, dataProperty, defineProperty, getOwnPropertyDescriptor, uncurryThis } from './intrinsics.js'
import { webFetch } from './web-fetch.js'

type Send = (request: unknown) => Promise<unknown>

const bufferFrom = Buffer.from
const bufferToString = uncurryThis(Buffer.prototype.toString)
const getter = (prototype: object, name: string) => uncurryThis(getOwnPropertyDescriptor(prototype, name)!.get! as (this: unknown) => unknown)
const signalAborted = getter(AbortSignal.prototype, 'aborted') as (signal: AbortSignal) => boolean
const signalReason = getter(AbortSignal.prototype, 'reason') as (signal: AbortSignal) => unknown
const addListener = uncurryThis(EventTarget.prototype.addEventListener) as (target: EventTarget, type: string, listener: () => void, options: object) => void
const removeListener = uncurryThis(EventTarget.prototype.removeEventListener) as (target: EventTarget, type: string, listener: () => void) => void
const byteLength = getter(ArrayBuffer.prototype, 'byteLength') as (buffer: ArrayBuffer) => number
/** Statuses whose response has no body: the `Response` constructor refuses one. */
const NULL_BODY: Record<number, true> = { __proto__: null, 101: true, 204: true, 205: true, 304: true } as unknown as Record<number, true>

/** `fetch(input, init)` through `send`, the broker's binding member. */
export function programFetch(send: Send): (input: unknown, init?: unknown) => Promise<Response> {
  const holder = {
    async fetch(input: unknown, init?: unknown): Promise<Response> {
      const { RequestOf, ResponseOf, requestMethod, requestUrl, requestHeaders, requestBody, requestRedirect, requestSignal, requestArrayBuffer, headersForEach } = webFetch()
      const request = new RequestOf(input as string, init as RequestInit | undefined)
      const message = create(null) as Record<string, unknown>
      const method = requestMethod(request)
      // The broker takes only these methods (it checks again): refused here, the program learns why at once.
      if (!isFetchMethod(method)) throw new TypeErrorOf(fetchMethodRefusal(method))
      message.method = method
      const url = requestUrl(request)
      if (url.length > PTC_FETCH_MAX_URL_LENGTH) throw new TypeErrorOf(fetchUrlRefusal(url.length))
      message.url = url
      message.redirect = requestRedirect(request)
      const signal = requestSignal(request)
      if (signalAborted(signal)) throw signalReason(signal)
      const headers: [string, string][] = []
      let headerBytes = 0
      // Refused at the first header past a cap (the broker refuses them too), before any more are read.
      headersForEach(requestHeaders(request), (value, name) => {
        headerBytes += name.length + value.length
        if (headers.length === PTC_FETCH_MAX_REQUEST_HEADERS || headerBytes > PTC_FETCH_MAX_REQUEST_HEADER_BYTES) throw new TypeErrorOf(fetchHeadersRefusal())
        headers[headers.length] = [name, value]
      })
      message.headers = headers
      if (requestBody(request) !== null) {
        const bytes = await requestArrayBuffer(request)
        const size = byteLength(bytes)
        if (size > PTC_FETCH_MAX_REQUEST_BODY_BYTES) {
          throw new TypeErrorOf(`fetch: the request body has ${size} bytes, over the cap of ${PTC_FETCH_MAX_REQUEST_BODY_BYTES}`)
        }
        message.body = bufferToString(bufferFrom(bytes), 'base64')
      }
      let answer: PtcFetchAnswer
      try {
        answer = (await untilAborted(send(message), signal)) as PtcFetchAnswer
      } catch (failure) {
        if (signalAborted(signal)) throw signalReason(signal)
        // Created here, after the await, so the async stack trace reaches the program's call.
        throw new TypeErrorOf(StringOf((failure as Error).message))
      }
      if (typeof answer !== 'object' || answer === null || typeof answer.status !== 'number') throw new ErrorOf('fetch: the host answered without a status')
      const options = create(null) as { status: number; statusText: string; headers: [string, string][] }
      options.status = answer.status
      options.statusText = answer.statusText
      options.headers = answer.headers
      const body = NULL_BODY[answer.status] === true ? null : bufferFrom(answer.body, 'base64')
      const response = new ResponseOf(body, options)
      // What a fetched Response reports, which the constructor cannot set.
      defineProperty(response, 'url', dataProperty(answer.url, true, false, true))
      defineProperty(response, 'redirected', dataProperty(answer.redirected, true, false, true))
      return response
    },
  }
  return holder.fetch
}

/**
 * `pending`, or a rejection with the signal's reason once it aborts: the program stops waiting
 * (as with Node's `fetch`); the broker's exchange ends with the run's own deadline.
 */
function untilAborted(pending: Promise<unknown>, signal: AbortSignal): Promise<unknown> {
  return new PromiseOf((resolve, reject) => {
    const aborted = () => reject(signalReason(signal))
    addListener(signal, 'abort', aborted, { __proto__: null, once: true })
    void (async () => {
      try {
        resolve(await pending)
      } catch (error) {
        reject(error)
      } finally {
        removeListener(signal, 'abort', aborted)
      }
    })()
  })
}
