/**
 * Keeping the headers the egress broker injects (a deployer's `Authorization`, an API key) out
 * of what the program receives. A server may echo a request back: TRACE does (the broker refuses
 * that method), and so do debugging endpoints, error pages that quote the request, and reflected
 * headers. The broker refuses such an answer whole rather than redacting it: a redacted body
 * may still be parsed by a program that expects it unchanged, and a refusal says what happened.
 *
 * What is searched for, in the answer's status text, header names and values and body: each
 * injected value and each of its space-separated parts (the token of `Bearer <token>`, the
 * credentials of `Basic <base64>`) of at least `MIN_PART` characters, and the JSON-escaped form
 * of each. Text the program reads as a URL (a redirect's Location, raw and as resolved, which
 * becomes `response.url`) and the messages of failures are searched more widely: percent-decoded
 * too, and in any case, since a URL's scheme and host are lowercased.
 * Every injected header counts as a secret: a header that is not one (`accept`, a version) is
 * the program's to set, and injecting it can only get ordinary answers refused.
 * The body is searched as the program would read it, so the broker asks for it unencoded and
 * refuses an answer that comes encoded anyway. A server that transforms a secret otherwise
 * (re-encodes it, splits it) is not caught: do not inject credentials for a host that does.
 */
import type { Answer } from './exchange.js'

/**
 * Shorter values and parts are ordinary words (`Bearer`, `Basic`, `v1`), which an answer may
 * carry for reasons of its own; searching for them would refuse ordinary answers.
 */
const MIN_PART = 8

/** One form of an injected value: its bytes, and with ASCII letters lowercased. */
export interface Secret {
  header: string
  needle: Buffer
  folded: Buffer
}

/** The forms that betray the values `headers` injects (host → header → value), for any host. */
export function secretsOf(headers: Record<string, Record<string, string>> | undefined): Secret[] {
  const found = new Map<string, string>()
  for (const [header, value] of Object.values(headers ?? {}).flatMap((injected) => Object.entries(injected))) {
    for (const form of [value, ...value.split(/\s+/)]) {
      if (form.length < MIN_PART) continue
      found.set(form, header)
      found.set(JSON.stringify(form).slice(1, -1), header)
    }
  }
  return [...found].map(([form, header]) => ({ header, needle: Buffer.from(form), folded: Buffer.from(foldAscii(form)) }))
}

/** Why an answer carrying `header`'s value may not reach the program. */
export function carried(header: string): string {
  return `carries the value of the ${header} header the host adds for it, which never reaches the program`
}

/**
 * Why `answer` may not reach the program, or undefined when it carries none of `secrets`:
 * an encoded body (which could hide one), or the header whose value it carries.
 */
export function echoIn(answer: Answer, secrets: Secret[]): string | undefined {
  if (secrets.length === 0) return undefined
  // Every coding of every Content-Encoding header: `identity, gzip` is gzip.
  const encodings = answer.headers
    .filter(([name]) => name.toLowerCase() === 'content-encoding')
    .flatMap(([, value]) => value.split(','))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity')
  if (encodings.length > 0 && answer.body.length > 0) {
    return `the answer is encoded (${encodings.join(', ')}), and the broker must read it to keep the headers it adds for this host from the program`
  }
  // Node reads header bytes as latin1: back to bytes, to compare with the values' bytes.
  const texts = [answer.statusText, ...answer.headers.flat()].map((text) => Buffer.from(text, 'latin1'))
  for (const { header, needle } of secrets) {
    if (answer.body.includes(needle) || texts.some((text) => text.includes(needle))) return `the answer ${carried(header)}`
  }
  return undefined
}

/**
 * The header whose injected value `text` carries, as written, percent-decoded or in another
 * case, or undefined: for text the program reads as a URL, or in a failure's message.
 */
export function echoInText(text: string, secrets: Secret[]): string | undefined {
  if (secrets.length === 0) return undefined
  const decoded = text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
  // Header text is latin1 (a byte a character), a message's may be any: both readings, as bytes.
  const forms = [Buffer.from(foldAscii(text), 'latin1'), Buffer.from(foldAscii(text)), Buffer.from(foldAscii(decoded), 'latin1')]
  return secrets.find(({ folded }) => forms.some((form) => form.includes(folded)))?.header
}

/** `text` with ASCII letters lowercased and every other character kept (its UTF-8 bytes unchanged). */
function foldAscii(text: string): string {
  return text.replace(/[A-Z]+/g, (run) => run.toLowerCase())
}
