import { describe, expect, it } from 'vitest'
import { alwaysWatched } from '../../src/tools/check-deadline.js'

describe('which schemas have every check watched', () => {
  it('a union, negation, condition or reference anywhere in the schema', () => {
    expect(alwaysWatched({ type: 'object', properties: { kind: { anyOf: [{ type: 'string' }, { type: 'number' }] } } })).toBe(true)
    expect(alwaysWatched({ type: 'array', items: [{ not: { type: 'null' } }] })).toBe(true)
    expect(alwaysWatched({ $defs: { node: { if: { type: 'string' } } } })).toBe(true)
    expect(alwaysWatched({ properties: { next: { $ref: '#' } } })).toBe(true)
    expect(alwaysWatched({ type: 'object', properties: { name: { type: 'string' } } })).toBe(false)
  })

  it('not a key named like one inside data (const, enum, default, examples)', () => {
    expect(alwaysWatched({
      type: 'object',
      properties: {
        filter: { const: { anyOf: [{ op: 'eq' }] } },
        mode: { enum: [{ oneOf: 1 }, { $ref: 'x' }] },
        query: { type: 'object', default: { not: true }, examples: [{ if: 'then' }] },
      },
    })).toBe(false)
  })

  it('nor a property named like one, while a schema under a property named like data is walked', () => {
    expect(alwaysWatched({ type: 'object', properties: { anyOf: { type: 'string' }, $ref: { type: 'string' } } })).toBe(false)
    expect(alwaysWatched({ type: 'object', properties: { const: { anyOf: [{ type: 'string' }, { type: 'number' }] } } })).toBe(true)
    expect(alwaysWatched({ $defs: { enum: { oneOf: [{ type: 'string' }] } } })).toBe(true)
  })
})
