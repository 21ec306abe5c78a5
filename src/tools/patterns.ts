/**
 * JSON Schema `pattern`s on a linear-time engine. Ajv runs a pattern as an ECMAScript regular
 * expression (flag `u`) on the host's thread, and V8's engine backtracks: `^(\w+\s?)*$` on 33
 * characters held the host for two minutes. RE2 never backtracks, so its time is linear in
 * the input, but it reads a slightly different syntax and means a few escapes otherwise.
 * `toLinearPattern` rewrites an ECMAScript pattern into RE2's syntax with ECMAScript's meaning:
 *
 * - `\s` and `\S` are ECMAScript's white space (RE2's are ASCII only), `.` excludes the four
 *   line terminators (RE2's only `\n`), `[^]` is any character and `[]` none;
 * - `\uXXXX` (surrogate pairs joined), `\u{…}`, `\cX` and `\0` become `\x{…}`; `(?<name>` becomes
 *   `(?P<name>`; a `[` inside a class is escaped (RE2 would read `[:alpha:]`).
 *
 * What a linear-time engine cannot run is refused with the reason, never run otherwise:
 * lookahead and lookbehind, backreferences, `\S` inside a class, and a repetition count over
 * RE2's 1 000. It is one pass over the pattern, cheap enough to check every pattern of a tool
 * group when it is defined, before any program sees it.
 */
import { keywordsOf } from './subschemas.js'

/** ECMAScript's white space and line terminators, the members of `\s`, in RE2's syntax. */
const WHITE_SPACE = '\\t\\n\\v\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}'
/** What `.` matches without the `s` flag: anything but a line terminator. */
const DOT = '[^\\n\\r\\x{2028}\\x{2029}]'
/** The most repetitions RE2 takes in `{n,m}`. */
const MAX_REPEAT = 1000

/** A pattern the linear-time engine cannot run; the message says which construct and why. */
export class UnsupportedPattern extends Error {
  override name = 'UnsupportedPattern'
}

const codePoint = (value: number) => `\\x{${value.toString(16)}}`
const HEX4 = /^[0-9a-fA-F]{4}$/

/** `pattern` in RE2's syntax with ECMAScript's meaning, or an `UnsupportedPattern` thrown. */
export function toLinearPattern(pattern: string): string {
  let out = ''
  let inClass = false
  let at = 0
  const refuse = (what: string): never => {
    throw new UnsupportedPattern(`${what}, which a linear-time engine cannot run`)
  }
  while (at < pattern.length) {
    const char = pattern[at]!
    if (char === '\\') {
      const [text, length] = escape(pattern, at, inClass, refuse)
      out += text
      at += length
      continue
    }
    if (inClass) {
      if (char === ']') inClass = false
      out += char === '[' ? '\\[' : char
      at++
      continue
    }
    if (char === '[') {
      if (pattern.startsWith('[^]', at)) {
        out += '[\\x{0}-\\x{10ffff}]'
        at += 3
      } else if (pattern.startsWith('[]', at)) {
        out += '[^\\x{0}-\\x{10ffff}]'
        at += 2
      } else {
        // A `]` first in the class is a literal to RE2 and closes an empty class in ECMAScript (handled above).
        inClass = true
        const negated = pattern[at + 1] === '^'
        out += negated ? '[^' : '['
        at += negated ? 2 : 1
      }
      continue
    }
    if (char === '.') {
      out += DOT
      at++
      continue
    }
    if (char === '(' && pattern[at + 1] === '?') {
      const rest = pattern.slice(at + 2, at + 4)
      if (rest.startsWith('=') || rest.startsWith('!')) refuse(`lookahead ${JSON.stringify(pattern.slice(at, at + 3))}`)
      if (rest === '<=' || rest === '<!') refuse(`lookbehind ${JSON.stringify(pattern.slice(at, at + 4))}`)
      if (rest.startsWith('<')) {
        out += '(?P<'
        at += 3
        continue
      }
    }
    if (char === '{') {
      const repeat = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(at, at + 24))
      if (repeat && (Number(repeat[1]) > MAX_REPEAT || Number(repeat[2] || 0) > MAX_REPEAT)) {
        throw new UnsupportedPattern(`the repetition ${repeat[0]} counts past ${MAX_REPEAT}, the most a linear-time engine takes`)
      }
    }
    out += char
    at++
  }
  return out
}

/** One escape at `at`: its RE2 text and how many characters of the pattern it took. */
function escape(pattern: string, at: number, inClass: boolean, refuse: (what: string) => never): [string, number] {
  const next = pattern[at + 1]
  if (next === undefined) return ['\\', 1]
  if (next === 's') return [inClass ? WHITE_SPACE : `[${WHITE_SPACE}]`, 2]
  if (next === 'S') {
    if (inClass) refuse(`${JSON.stringify(pattern.slice(at, at + 2))} inside a character class`)
    return [`[^${WHITE_SPACE}]`, 2]
  }
  if (next === '0' && !/[0-9]/.test(pattern[at + 2] ?? '')) return ['\\x{0}', 2]
  if (/[1-9]/.test(next)) refuse(`the backreference ${JSON.stringify(pattern.slice(at, at + 2))}`)
  // Inside a class `\b` is a backspace, which RE2 spells only as a code point.
  if (next === 'b' && inClass) return [codePoint(8), 2]
  if (next === 'k' && pattern[at + 2] === '<') refuse(`the named backreference ${JSON.stringify(pattern.slice(at, pattern.indexOf('>', at) + 1 || at + 3))}`)
  if (next === 'c' && /[A-Za-z]/.test(pattern[at + 2] ?? '')) return [codePoint(pattern.charCodeAt(at + 2) % 32), 3]
  if (next === 'u') {
    const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(pattern.slice(at + 2, at + 10))
    if (braced) return [codePoint(parseInt(braced[1]!, 16)), 3 + braced[0].length - 1]
    const high = pattern.slice(at + 2, at + 6)
    if (HEX4.test(high)) {
      const value = parseInt(high, 16)
      const low = pattern.slice(at + 8, at + 12)
      // A surrogate pair written as two escapes is one code point, as under the `u` flag.
      if (value >= 0xd800 && value <= 0xdbff && pattern.startsWith('\\u', at + 6) && HEX4.test(low)) {
        const second = parseInt(low, 16)
        if (second >= 0xdc00 && second <= 0xdfff) return [codePoint(0x10000 + ((value - 0xd800) << 10) + (second - 0xdc00)), 12]
      }
      return [codePoint(value), 6]
    }
  }
  if (next === '/') return ['/', 2]
  return [`\\${next}`, 2]
}

/**
 * Every `pattern` and `patternProperties` key of `schema`, with where it is
 * (`$.properties.code.pattern`); a pattern inside data (`const`, `enum`, …) is not one.
 */
export function patternsOf(schema: unknown): { pattern: string; path: string }[] {
  const found: { pattern: string; path: string }[] = []
  for (const { name, value, path } of keywordsOf(schema)) {
    if (name === 'pattern' && typeof value === 'string') found.push({ pattern: value, path })
    if (name === 'patternProperties' && typeof value === 'object' && value !== null) {
      for (const key of Object.keys(value)) found.push({ pattern: key, path: `${path}[${JSON.stringify(key)}]` })
    }
  }
  return found
}
