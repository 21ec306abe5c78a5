/**
 * `fetch` for Python programs under brokered egress. The request crosses from Python as JSON
 * text, goes through the run's own brokered `fetch` (fetch.ts, which the binding bridge installs
 * for the run, so the host's broker checks and makes it as for JavaScript), and the response
 * crosses back as JSON text, its body in base64 so bytes stay bytes.
 */
import { PromiseOf, create, getOwnPropertyDescriptor, uncurryThis } from './intrinsics.js'
import { webFetch } from './web-fetch.js'

/** The run's JavaScript `fetch` (the brokered one). */
export type ProgramFetch = (input: unknown, init?: unknown) => Promise<Response>
/** What the prelude's `fetch` calls: the request's JSON text in; `v` and the response's JSON text, or `e` and why, out. */
export type PythonFetch = (request: string) => Promise<string>

const jsonParse = JSON.parse
const jsonStringify = JSON.stringify
const bufferFrom = Buffer.from
const bufferToString = uncurryThis(Buffer.prototype.toString) as (buffer: Buffer, encoding: string) => string
const promiseThen = uncurryThis(Promise.prototype.then) as (promise: Promise<unknown>, fulfilled: (value: never) => void, rejected: (error: unknown) => void) => unknown

interface PythonRequest {
  url: string
  method: string
  headers: Record<string, string>
  body: string | null
  base64: boolean
}

/** The bridge from the prelude's `fetch` to the run's brokered `fetch`. */
export function pythonFetch(fetch: ProgramFetch): PythonFetch {
  return (text) =>
    new PromiseOf<string>((resolve) => {
      const fail = (error: unknown) => resolve(`e${messageOf(error)}`)
      try {
        const { url, method, headers, body, base64 } = jsonParse(text) as PythonRequest
        const init = create(null) as Record<string, unknown>
        init.method = method
        init.headers = headers
        if (body !== null) init.body = base64 ? bufferFrom(body, 'base64') : body
        const { responseArrayBuffer, responseHeaders, responseStatus, responseStatusText, responseUrl, headersForEach } = webFetch()
        promiseThen(fetch(url, init), (response: Response) => {
          promiseThen(responseArrayBuffer(response), (buffer: ArrayBuffer) => {
            const pairs: Array<[string, string]> = []
            headersForEach(responseHeaders(response), (value, name) => {
              pairs[pairs.length] = [name, value]
            })
            // The brokered fetch gives its Response the URL it reached as an own property (a constructed Response has none).
            const own = getOwnPropertyDescriptor(response, 'url')
            const url = own !== undefined && typeof own.value === 'string' ? own.value : responseUrl(response)
            const answer = { status: responseStatus(response), statusText: responseStatusText(response), url, headers: pairs, body: bufferToString(bufferFrom(buffer), 'base64') }
            resolve(`v${jsonStringify(answer)}`)
          }, fail)
        }, fail)
      } catch (error) {
        fail(error)
      }
    })
}

/** An error's message for the program, whatever was thrown. */
export function messageOf(error: unknown): string {
  try {
    return typeof error === 'object' && error !== null && typeof (error as Error).message === 'string' ? (error as Error).message : `${error as string}`
  } catch {
    return 'the tool call failed'
  }
}
