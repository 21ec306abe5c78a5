/**
 * Keeping the headers the egress broker injects (a deployer's `Authorization`, an API key) out
 * of what the program receives. A server may echo a request back: TRACE does (the broker refuses
 * that method), and so do debugging endpoints, error pages that quote the request, and reflected
 * headers. The broker refuses such an answer whole rather than redacting it: a redacted body
 * may still be parsed by a program that expects it unchanged, and a refusal says what happened.
 *
 * What is searched for, in the answer's status text, header values and body: each injected
 * value and each of its space-separated parts (the token of `Bearer <token>`, the credentials
 * of `Basic <base64>`) of at least `MIN_PART` characters, and the JSON-escaped form of each.
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

/** The byte strings that betray the values `headers` injects (host → header → value), for any host. */
export function secretsOf(headers: Record<string, Record<string, string>> | undefined): { header: string; needle: Buffer }[] {
  const found = new Map<string, string>()
  for (const [header, value] of Object.values(headers ?? {}).flatMap((injected) => Object.entries(injected))) {
    for (const form of [value, ...value.split(/\s+/)]) {
      if (form.length < MIN_PART) continue
      found.set(form, header)
      found.set(JSON.stringify(form).slice(1, -1), header)
    }
  }
  return [...found].map(([form, header]) => ({ header, needle: Buffer.from(form) }))
}

/**
 * Why `answer` may not reach the program, or undefined when it carries none of `secrets`:
 * an encoded body (which could hide one), or the header whose value it carries.
 */
export function echoIn(answer: Answer, secrets: { header: string; needle: Buffer }[]): string | undefined {
  if (secrets.length === 0) return undefined
  const encoding = answer.headers.find(([name]) => name.toLowerCase() === 'content-encoding')?.[1].trim().toLowerCase()
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity' && answer.body.length > 0) {
    return `the answer is encoded (${encoding}), and the broker must read it to keep the headers it adds for this host from the program`
  }
  const texts = [answer.statusText, ...answer.headers.map(([, value]) => value)].map((text) => Buffer.from(text))
  for (const { header, needle } of secrets) {
    if (answer.body.includes(needle) || texts.some((text) => text.includes(needle))) {
      return `the answer carries the value of the ${header} header the host adds for it, which never reaches the program`
    }
  }
  return undefined
}
