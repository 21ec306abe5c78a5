import { describe, expect, it } from 'vitest'
import {
  DUNDER_MEMBER,
  PORTABLE_RESERVED_WORDS,
  RESERVED_BINDING_GLOBALS,
  RESERVED_ERROR_MEMBERS,
  validateBindings,
  type PtcBindingNamespace,
} from 'ptc-runtime'

const fn = async () => null
const ns = (global: string, errorClass?: PtcBindingNamespace['errorClass']): PtcBindingNamespace => ({
  global,
  functions: { run: fn },
  ...(errorClass ? { errorClass } : {}),
})

describe('portable binding names', () => {
  it('accepts identifiers, error classes and free-form member names', () => {
    expect(() =>
      validateBindings([
        { global: 'tools', functions: { __proto__: fn, constructor: fn, 'a b': fn } as never },
        ns('snake_case1', { name: 'ToolCallError', memberNameProperty: 'toolName' }),
        ns('ToolCallError2', { name: 'Other', memberNameProperty: 'tool name' }),
      ]),
    ).not.toThrow()
  })

  it.each(['$tools', 'a$b', 'not valid!', '', '1abc'])('rejects the non-identifier global %j', (name) => {
    expect(() => validateBindings([ns(name)])).toThrow(`binding global ${JSON.stringify(name)} must match`)
  })

  it.each(['await', 'lambda', 'None', '_', 'eval', 'match'])('rejects the reserved word %j', (name) => {
    expect(() => validateBindings([ns(name)])).toThrow(/not be a reserved word/)
  })

  it.each(['console', 'inspect', 'Image', '__builtins__', '__ptc__'])('rejects the runtime global %j', (name) => {
    expect(() => validateBindings([ns(name)])).toThrow(`binding global "${name}" is reserved by the runtime`)
  })

  it('rejects a duplicate global', () => {
    expect(() => validateBindings([ns('tools'), ns('tools')])).toThrow('binding global "tools" is declared twice')
  })

  it('rejects an error class named like a global or a bad identifier', () => {
    expect(() => validateBindings([ns('tools', { name: 'tools', memberNameProperty: 'x' })])).toThrow(
      'binding error class "tools" collides with another injected global',
    )
    expect(() => validateBindings([ns('a', { name: 'E', memberNameProperty: 'x' }), ns('b', { name: 'E', memberNameProperty: 'x' })])).toThrow(/collides/)
    expect(() => validateBindings([ns('a', { name: 'class', memberNameProperty: 'x' })])).toThrow(/reserved word/)
    expect(() => validateBindings([ns('a', { name: 'Image', memberNameProperty: 'x' })])).toThrow(/reserved by the runtime/)
  })

  it.each(['', 'message', 'args', 'name', 'stack', '__dict__'])('rejects the error member property %j', (member) => {
    expect(() => validateBindings([ns('tools', { name: 'ToolError', memberNameProperty: member })])).toThrow(
      `binding error member property ${JSON.stringify(member)}`,
    )
  })

  it('exports the four name sets', () => {
    expect(PORTABLE_RESERVED_WORDS.size).toBe(71)
    expect([...RESERVED_BINDING_GLOBALS]).toEqual(expect.arrayContaining(['console', 'inspect', 'Image']))
    expect(RESERVED_ERROR_MEMBERS.has('with_traceback')).toBe(true)
    expect(DUNDER_MEMBER.test('__x__')).toBe(true)
    expect(DUNDER_MEMBER.test('____')).toBe(false)
    expect(DUNDER_MEMBER.test('__mid')).toBe(false)
  })
})
