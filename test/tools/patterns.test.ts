/**
 * Schema patterns on RE2 mean what they mean in ECMAScript: for each pattern, the rewrite run on
 * RE2 answers every input as V8's own engine (flag `u`, as Ajv compiles) does.
 */
import { RE2JS } from 're2js'
import { describe, expect, it } from 'vitest'
import { UnsupportedPattern, patternsOf, toLinearPattern } from '../../src/tools/patterns.js'

const INPUTS = ['', 'a', 'A', 'ab', 'a b', 'a\u00a0b', 'a\u2028b', 'a\rb', 'a\nb', 'a\tb', 'a\vb', 'a\ufeffb', '١٢', 'é', 'É', '😀', '😁x', 'abc\n', 'abcd', '2024-01-31',
  'tool_name-1', '#a0B1c2', '+4915112345678', 'user@example.com', 'https://x.org/a', '123e4567-e89b-12d3-a456-426614174000', '[x]', '\b', '-', '/', '^', '\u0000', 'a{,3}', 'Ab Cd']

const PATTERNS = ['^\\d+$', '^\\w+$', '^\\s$', 'a\\sb', 'a\\Sb', '^a.b$', '^.$', '^[^]$', '^[]$', '^[\\s\\d]+$', '^[^\\s]+$', '^\\p{L}+$', '^\\p{Lu}', '^\\P{L}$',
  '^\\u{1F600}$', '^\\uD83D\\uDE00', '^[\\u0041-\\u005A]+$', '^\\x41', '^[😀-😂]', '^(?<year>\\d{4})-\\d{2}', '\\bb', '^abc$', '^(a|ab)(c|bcd)(d*)$', '^[\\w-]+$',
  '^https?:\\/\\/', '^[a-zA-Z0-9_-]{1,64}$', '^#[0-9a-fA-F]{6}$', '^\\+?[1-9]\\d{1,14}$', '^\\d{4}-\\d{2}-\\d{2}$', '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$', '', 'b', '^\\cJ$', '^[\\[\\]x]+$', '^[[x]+$', '^[\\b]$', '^\\0$', '^[\\^]$', '^\\/$', '^(\\w+\\s?)*$', '^[A-Z][a-z]+(?: [A-Z][a-z]+)*$']

describe('schema patterns rewritten for RE2', () => {
  it('answer every input as ECMAScript does', () => {
    for (const pattern of PATTERNS) {
      const native = new RegExp(pattern, 'u')
      const linear = RE2JS.compile(toLinearPattern(pattern))
      for (const input of INPUTS) expect(linear.test(input), `${JSON.stringify(pattern)} on ${JSON.stringify(input)}`).toBe(native.test(input))
    }
  })

  it('refuse what a linear-time engine cannot run, naming it', () => {
    const reason = (pattern: string) => {
      try {
        toLinearPattern(pattern)
        return 'accepted'
      } catch (error) {
        expect(error).toBeInstanceOf(UnsupportedPattern)
        return (error as Error).message
      }
    }
    expect(reason('(a)\\1')).toBe('the backreference "\\\\1", which a linear-time engine cannot run')
    expect(reason('(?<x>a)\\k<x>')).toBe('the named backreference "\\\\k<x>", which a linear-time engine cannot run')
    expect(reason('a(?=b)')).toBe('lookahead "(?=", which a linear-time engine cannot run')
    expect(reason('a(?!b)')).toBe('lookahead "(?!", which a linear-time engine cannot run')
    expect(reason('(?<=a)b')).toBe('lookbehind "(?<=", which a linear-time engine cannot run')
    expect(reason('[\\S]')).toBe('"\\\\S" inside a character class, which a linear-time engine cannot run')
    expect(reason('a{1001}')).toBe('the repetition {1001} counts past 1000, the most a linear-time engine takes')
    expect(reason('[(?=x)\\1]')).toBe('the backreference "\\\\1", which a linear-time engine cannot run')
    expect(reason('[(?=x)]')).toBe('accepted')
  })

  it('finds the patterns of a schema and the keys of patternProperties, but not patterns in data', () => {
    expect(patternsOf({
      type: 'object',
      properties: { code: { type: 'string', pattern: '^a' }, pattern: { type: 'string' }, list: { type: 'array', items: [{ pattern: 'b' }] } },
      patternProperties: { '^x-': { pattern: 'c' } },
      enum: [{ pattern: 'data' }],
      default: { pattern: 'data' },
      // A property named like data is a schema all the same.
      $defs: { const: { pattern: 'd' } },
    }).map(({ pattern, path }) => `${path} ${pattern}`).sort()).toEqual([
      '$.$defs.const.pattern d',
      '$.patternProperties["^x-"] ^x-',
      '$.patternProperties["^x-"].pattern c',
      '$.properties.code.pattern ^a',
      '$.properties.list.items[0].pattern b',
    ])
  })
})
