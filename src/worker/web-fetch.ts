/**
 * Node's `Request`, `Response` and `Headers`, for the program's brokered `fetch` (fetch.ts,
 * python-fetch.ts), captured when the first fetch needs them. Node defines the three as lazy
 * globals whose first read loads its fetch implementation (undici, with http2 and tls): about
 * 25 ms of CPU, a third of a fresh worker's start (measured with `--cpu-prof`), which a program
 * that never fetches should not pay. Node's own getters are captured as the environment starts
 * instead, so a program that replaced the globals still gets Node's classes; one that patched
 * their prototypes before its first fetch breaks only its own fetches.
 */
import { apply, dataProperty, defineProperty, getOwnPropertyDescriptor, realmGlobal, uncurryThis } from './intrinsics.js'

const { deleteProperty } = Reflect

/**
 * The global `name` as Node defined it, read when first called. Calling Node's lazy getter
 * yields its own class whatever the global now holds; the getter also redefines the global,
 * which is then set back to what the program left there.
 */
function lazyGlobal<T>(name: string): () => T {
  const descriptor = getOwnPropertyDescriptor(realmGlobal, name)
  const get = descriptor?.get
  if (!get) return () => descriptor?.value as T
  return () => {
    const left = getOwnPropertyDescriptor(realmGlobal, name)
    // Where the program deleted the global, the getter would define it for good (not configurable).
    if (!left) defineProperty(realmGlobal, name, dataProperty(undefined, false, true, true))
    let value: T
    try {
      value = apply(get, realmGlobal, []) as T
    } catch {
      // The program froze the global, so the getter failed to redefine it, after it read the class.
      value = apply(get, realmGlobal, []) as T
    }
    if (left) defineProperty(realmGlobal, name, left)
    else deleteProperty(realmGlobal, name)
    return value
  }
}

let requestClass: () => typeof Request
let responseClass: () => typeof Response
let headersClass: () => typeof Headers

/**
 * Captures Node's getters of the three globals. Called as the environment starts, before any
 * program, not as this module loads: while a startup snapshot is made (src/worker/snapshot.ts)
 * Node has no fetch, and on Node 22 looking at these globals then loads undici, which fails.
 */
export function captureFetchClasses(): void {
  requestClass = lazyGlobal('Request')
  responseClass = lazyGlobal('Response')
  headersClass = lazyGlobal('Headers')
}

const getter = (prototype: object, name: string) => uncurryThis(getOwnPropertyDescriptor(prototype, name)!.get! as (this: unknown) => unknown)

/** What a brokered fetch uses of Node's fetch classes. */
export interface WebFetch {
  RequestOf: typeof Request
  ResponseOf: typeof Response
  requestMethod: (request: Request) => string
  requestUrl: (request: Request) => string
  requestHeaders: (request: Request) => Headers
  requestBody: (request: Request) => unknown
  requestRedirect: (request: Request) => string
  requestSignal: (request: Request) => AbortSignal
  requestArrayBuffer: (request: Request) => Promise<ArrayBuffer>
  responseStatus: (response: Response) => number
  responseStatusText: (response: Response) => string
  responseUrl: (response: Response) => string
  responseHeaders: (response: Response) => Headers
  responseArrayBuffer: (response: Response) => Promise<ArrayBuffer>
  headersForEach: (headers: Headers, each: (value: string, name: string) => void) => void
}

let captured: WebFetch | undefined

/** Node's fetch classes and the members a brokered fetch calls, captured on the first call. */
export function webFetch(): WebFetch {
  if (captured) return captured
  const RequestOf = requestClass()
  const ResponseOf = responseClass()
  const request = RequestOf.prototype
  const response = ResponseOf.prototype
  captured = {
    RequestOf,
    ResponseOf,
    requestMethod: getter(request, 'method') as WebFetch['requestMethod'],
    requestUrl: getter(request, 'url') as WebFetch['requestUrl'],
    requestHeaders: getter(request, 'headers') as WebFetch['requestHeaders'],
    requestBody: getter(request, 'body') as WebFetch['requestBody'],
    requestRedirect: getter(request, 'redirect') as WebFetch['requestRedirect'],
    requestSignal: getter(request, 'signal') as WebFetch['requestSignal'],
    requestArrayBuffer: uncurryThis(request.arrayBuffer),
    responseStatus: getter(response, 'status') as WebFetch['responseStatus'],
    responseStatusText: getter(response, 'statusText') as WebFetch['responseStatusText'],
    responseUrl: getter(response, 'url') as WebFetch['responseUrl'],
    responseHeaders: getter(response, 'headers') as WebFetch['responseHeaders'],
    responseArrayBuffer: uncurryThis(response.arrayBuffer),
    headersForEach: uncurryThis(headersClass().prototype.forEach) as WebFetch['headersForEach'],
  }
  return captured
}
