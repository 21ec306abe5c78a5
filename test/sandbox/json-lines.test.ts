import { describe, expect, it } from 'vitest'
import { ENTRY_ELEMENTS_WHY, FRAME_TEXT_BYTES, MAX_PROTOCOL_KEYS, lineLimits, tooManyPendingCallsMessage } from '../../src/host/connection/frame-bounds.js'
import { jsonByteLength } from '../../src/json/index.js'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { ARRIVED_BYTES, ARRIVED_VALUES, JsonLines, type JsonLinesLimits } from '../../src/host/connection/json-lines.js'
import { readMessage } from '../../src/host/connection/message-inflow.js'
import { KEY_BOUNDS_RULE, MAX_DRAW_BYTES, MAX_DRAWS, MAX_MESSAGE_KEYS, MAX_MESSAGE_VALUES, MAX_OBJECT_KEYS } from '../../src/protocol/messages.js'

/** The budgets frames are read with here, unless a test says otherwise. */
const budget = { maxOutputBytes: 1 << 20, maxPendingCallBytes: 1 << 20, maxPendingCalls: 128 }

// A root bounded only by the line's own length: containers may open anywhere below it.
const open: JsonLinesLimits = { maxLineBytes: 1 << 24, maxDepth: 1 << 20, shape: { kinds: 'any', bytes: 1 << 24 } }

/** Every line of `text` pushed in pieces of `size` bytes, or `'refused'`. */
function lines(text: string, size: number, limits = open): unknown[] | 'refused' {
  const values: unknown[] = []
  const reader = new JsonLines(limits, (value) => (values.push(value), true))
  const bytes = Buffer.from(text)
  for (let at = 0; at < bytes.length; at += size) {
    if (!reader.push(bytes.subarray(at, at + size))) return 'refused'
  }
  return values
}

/** How many bytes of `text` the reader took before it refused the line (or its length). */
function refusedAt(text: string, limits: JsonLinesLimits): number {
  const reader = new JsonLines(limits, () => true)
  const bytes = Buffer.from(text)
  for (let at = 0; at < bytes.length; at++) if (!reader.push(bytes.subarray(at, at + 1))) return at
  return bytes.length
}

describe('the host reader of lines of JSON', () => {
  const samples = [
    '{"type":"message","message":{"text":"é漢字🙂\\"\\\\\\n\\u0000","list":[1,-2.5e-3,0,true,false,null,[],{}]}}',
    '[[[[["deep"]]]]]',
    '"a string alone"',
    '12345678901234567890',
  ]

  it('reads each line as JSON.parse does, however the bytes are split', () => {
    const text = samples.map((sample) => `${sample}\n`).join('')
    for (const size of [1, 2, 3, 7, 64, text.length]) expect(lines(text, size)).toEqual(samples.map((sample) => JSON.parse(sample)))
  })

  it('keeps "__proto__" an own key of a plain object', () => {
    const [value] = lines('{"__proto__":{"polluted":true}}\n', 5) as [Record<string, unknown>]
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
    expect(Object.hasOwn(value, '__proto__')).toBe(true)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it.each([
    ['a number past the largest double', '[1e999]'],
    ['negative zero', '{"a":-0}'],
    ['a repeated key', '{"a":1,"a":2}'],
    ['a trailing comma', '[1,]'],
    ['a raw control character in a string', '["a\tb"]'],
    ['a mismatched close', '[1}'],
    ['two values on one line', '1 2'],
    ['an empty line', ''],
    ['a leading zero', '[01]'],
  ])('refuses what lossless JSON cannot hold: %s', (_name, text) => {
    expect(lines(`${text}\n`, 1)).toBe('refused')
    expect(lines(`${text}\n`, 100)).toBe('refused')
  })

  it('refuses a line at its length bound while it trickles in, before it ends', () => {
    expect(refusedAt(`"${'x'.repeat(5000)}"`, { ...open, maxLineBytes: 1000 })).toBeLessThanOrEqual(1001)
    expect(refusedAt(`[${'0,'.repeat(5000)}0]`, { ...open, maxLineBytes: 1000 })).toBeLessThanOrEqual(1001)
  })

  it('refuses nesting past its depth bound at the first container past it', () => {
    expect(refusedAt('['.repeat(100), { ...open, maxDepth: 10 })).toBe(10)
  })

  it('refuses a container where a frame has none at its first byte', () => {
    const limits = lineLimits('frame', budget)
    const forged = `{"type":"message","message":[${'{},'.repeat(1000)}{}]}`
    expect(refusedAt(forged, limits)).toBe(forged.indexOf('['))
    const padded = `{"type":"message","message":{"type":"output","run":1,"items":[],"padding":[[]]}}`
    expect(refusedAt(padded, limits)).toBe(padded.indexOf('[[]'))
  })

  it('refuses a call whose arguments pass maxPendingCallBytes as soon as they pass it', () => {
    const limits = lineLimits('frame', { ...budget, maxPendingCallBytes: 1000 })
    const call = `{"type":"message","message":{"type":"call","run":1,"id":1,"global":"g","name":"f","args":[${'{},'.repeat(2000)}{}]}}`
    const start = call.indexOf('"args":') + 7
    expect(refusedAt(call, limits)).toBeGreaterThan(start + 990)
    expect(refusedAt(call, limits)).toBeLessThanOrEqual(start + 1002)
    const within = `{"type":"message","message":{"type":"call","run":1,"id":1,"global":"g","name":"f","args":[${'{},'.repeat(300)}{}]}}\n`
    expect(lines(within, 10, limits)).toEqual([JSON.parse(within)])
  })

  it('counts the bytes a call\'s arguments took as they arrived, as jsonByteLength counts them', () => {
    const args = { list: [1, 'é漢🙂\n"', { nested: [[], {}] }], n: -2.5e-7 }
    const frame = `${JSON.stringify({ type: 'message', message: { type: 'call', run: 1, id: 1, global: 'g', name: 'f', args } })}\n`
    const [read] = lines(frame, 3, lineLimits('frame', budget)) as [{ message: { args: object } }]
    expect(ARRIVED_BYTES.get(read.message.args)).toBe(jsonByteLength(args))
  })

  it('counts the values a call\'s arguments hold, themselves included and keys not', () => {
    const args = { list: [1, 'x', { nested: [[], {}] }], n: 2, t: true, z: null }
    const frame = `${JSON.stringify({ type: 'message', message: { type: 'call', run: 1, id: 1, global: 'g', name: 'f', args } })}\n`
    const [read] = lines(frame, 3, lineLimits('frame', budget)) as [{ message: { args: object } }]
    expect(ARRIVED_VALUES.get(read.message.args)).toBe(11)
  })

  it('holds a list nested a million deep in about 56 bytes a level, not the room V8 gives a list grown by push', () => {
    setFlagsFromString('--expose-gc')
    const collect = runInNewContext('gc') as () => void
    const depth = 1_000_000
    collect()
    const before = process.memoryUsage().heapUsed
    const read = lines(`${'['.repeat(depth)}0${']'.repeat(depth)}\n`, 65_536, { ...open, maxDepth: 2 * depth })
    collect()
    const perLevel = (process.memoryUsage().heapUsed - before) / depth
    expect(read).toHaveLength(1)
    // 184 bytes a level before: each one-element list kept room for 16.
    expect(perLevel).toBeLessThan(90)
  })

  it('reads a stream entry line with its frame second, and a thread message whole', () => {
    const frame = { type: 'message', message: { type: 'done', run: 1, value: { list: [[1], { a: [] }] } } }
    expect(lines(`${JSON.stringify(['channel', frame])}\n`, 3, lineLimits('entry', budget))).toEqual([['channel', frame]])
    expect(readMessage(JSON.stringify(frame.message), lineLimits('message', budget))).toEqual({ value: frame.message })
    expect(readMessage('[{}]', lineLimits('message', budget))).toEqual({ refusal: undefined })
    expect(readMessage('{"type":"done"}\n{"type":"done"}', lineLimits('message', budget))).toEqual({ refusal: undefined })
  })

  /**
   * `head`, then `count` elements of `element` and the first byte of one more, then a tail that
   * is not JSON: only a refusal at that byte, the first of the element past a bound, names the
   * bound (a refusal later would be the tail's). Where the reader refused, and why.
   */
  function refusalOf(head: string, element: string, count: number, limits: JsonLinesLimits) {
    const text = `${head}${`${element},`.repeat(count)}${element[0]}]} not JSON`
    const reader = new JsonLines(limits, () => true)
    const bytes = Buffer.from(text)
    let at = 0
    while (at < bytes.length && reader.push(bytes.subarray(at, at + 1))) at++
    return { at, past: bytes.length - ` not JSON`.length - 3, why: reader.refusal }
  }

  it.each(['clock', 'random', 'bytes'])('reads a report of recorded values whose %s holds MAX_DRAWS values, and refuses the first value past them', (field) => {
    const limits = lineLimits('message', budget)
    const value = field === 'bytes' ? '"0a"' : '1.5'
    const head = `{"type":"draws","run":1,"${field}":[`
    const full = `${head}${`${value},`.repeat(MAX_DRAWS - 1)}${value}]}`
    expect(readMessage(full, limits)).toEqual({ value: JSON.parse(full) })
    const { at, past, why } = refusalOf(head, value, MAX_DRAWS, limits)
    expect(at).toBe(past)
    expect(why).toBe(`"${field}" holds more than ${MAX_DRAWS} values, more than a durable run records (MAX_DRAWS)`)
  })

  it('reads a batch of maxPendingCalls binding calls, and refuses the first call past them, naming the option', () => {
    const call = (id: number) => `{"type":"call","run":1,"id":${id},"global":"g","name":"f","args":{"list":[${id}]}}`
    const calls = Array.from({ length: budget.maxPendingCalls }, (_, index) => call(index + 1))
    const full = `{"type":"calls","run":1,"calls":[${calls.join(',')}]}`
    expect(readMessage(full, lineLimits('message', budget))).toEqual({ value: JSON.parse(full) })
    const { at, past, why } = refusalOf('{"type":"message","message":{"type":"calls","run":1,"calls":[', call(1), budget.maxPendingCalls, lineLimits('frame', budget))
    expect(at).toBe(past)
    expect(why).toBe(tooManyPendingCallsMessage(budget.maxPendingCalls))
  })

  it('refuses a second entry of output at its first byte, and a stream entry line carries the bound', () => {
    const { at, past, why } = refusalOf('["channel",{"type":"message","message":{"type":"output","run":1,"items":[', '"text"', 1, lineLimits('entry', budget))
    expect(at).toBe(past)
    expect(why).toMatch(/an output message holds more than one entry/)
  })

  it('reads the longest stream entry line, and refuses the first element past it', () => {
    const limits = lineLimits('entry', budget)
    expect(lines('["ended","exited with code 1",false]\n', 3, limits)).toEqual([['ended', 'exited with code 1', false]])
    // A helper frame the entry forwards unparsed can close early and pad the entry's list.
    const { at, past, why } = refusalOf('["channel",{"type":"exit","message":"x"},0,', '0', 0, limits)
    expect(at).toBe(past)
    expect(why).toBe(ENTRY_ELEMENTS_WHY)
  })

  /** `head`, then `count` distinct keys and the first byte of one more, then a tail that is not JSON. */
  function keysRefusal(head: string, count: number, limits: JsonLinesLimits) {
    const keys = Array.from({ length: count }, (_, index) => `"k${index}":0,`).join('')
    const text = `${head}${keys}"k} not JSON`
    const reader = new JsonLines(limits, () => true)
    const bytes = Buffer.from(text)
    let at = 0
    while (at < bytes.length && reader.push(bytes.subarray(at, at + 1))) at++
    return { at, past: bytes.length - `k} not JSON`.length - 1, why: reader.refusal }
  }

  it.each([
    ['a frame', 'frame', '{"type":"message",'],
    ['a message', 'frame', '{"type":"message","message":{"type":"output",'],
    ['a thread worker\'s message', 'message', '{"type":"output",'],
    ['a call of a batch', 'message', '{"type":"calls","run":1,"calls":[{"type":"call",'],
    ['a message in a stream entry line', 'entry', '["channel",{"type":"message","message":{"type":"done",'],
  ] as const)('refuses %s at its first key past MAX_PROTOCOL_KEYS', (_name, kind, head) => {
    // Each head has opened the object with one key.
    const { at, past, why } = keysRefusal(head, MAX_PROTOCOL_KEYS - 1, lineLimits(kind, budget))
    expect(at).toBe(past)
    expect(why).toMatch(/more than 16 fields/)
  })

  it('reads a message whose program data holds 100 000 keys', () => {
    const value = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`k${index}`, index]))
    const done = { type: 'message', message: { type: 'done', run: 1, value } }
    const call = { type: 'message', message: { type: 'call', run: 1, id: 1, global: 'g', name: 'f', args: value } }
    const limits = lineLimits('frame', { ...budget, maxOutputBytes: 1 << 24, maxPendingCallBytes: 1 << 24 })
    const text = `${JSON.stringify(done)}\n${JSON.stringify(call)}\n`
    expect(lines(text, 65536, limits)).toEqual([done, call])
  })

  describe('program data past its key bounds', () => {
    /** Budgets that let a line of millions of keys through on its bytes: only the key bounds refuse it. */
    const roomy = { ...budget, maxOutputBytes: 1 << 25, maxPendingCallBytes: 1 << 25 }
    /** `count` distinct keys, `"<prefix>0":0,` and on, each followed by a comma. */
    const keys = (count: number, prefix = 'k') => Array.from({ length: count }, (_, index) => `"${prefix}${index}":0,`).join('')
    const call = (id: number, args: string) => `{"type":"call","run":1,"id":${id},"global":"g","name":"f","args":${args}}`

    /**
     * Whether the reader takes all of `head` and refuses the byte after it, the first of the key
     * past a bound, and why: one push of the head, then that byte alone.
     */
    function refusalAfter(head: string, limits: JsonLinesLimits) {
      const reader = new JsonLines(limits, () => true)
      const tookHead = reader.push(Buffer.from(head))
      const tookKey = reader.push(Buffer.from('"'))
      return { tookHead, tookKey, why: reader.refusal }
    }

    it.each([
      ['a call\'s arguments', 'frame', '{"type":"message","message":{"type":"call","run":1,"id":1,"global":"g","name":"f","args":{', 'args'],
      ['a completion', 'frame', '{"type":"message","message":{"type":"done","run":1,"value":{"nested":{', 'value'],
      ['a call of a thread worker\'s batch', 'message', `{"type":"calls","run":1,"calls":[${call(1, '{}')},{"type":"call","run":1,"id":2,"global":"g","name":"f","args":[{`, 'args'],
    ] as const)('refuses an object of %s at its first key past MAX_OBJECT_KEYS, naming the field and the rule', (_name, kind, head, field) => {
      const refused = refusalAfter(`${head}${keys(MAX_OBJECT_KEYS)}`, lineLimits(kind, roomy))
      expect(refused).toEqual({ tookHead: true, tookKey: false, why: `"${field}" holds an object of more than ${MAX_OBJECT_KEYS} keys, and ${KEY_BOUNDS_RULE}` })
    })

    it('reads an object of MAX_OBJECT_KEYS keys', () => {
      const value = Object.fromEntries(Array.from({ length: MAX_OBJECT_KEYS }, (_, index) => [`k${index}`, index]))
      const frame = { type: 'message', message: { type: 'call', run: 1, id: 1, global: 'g', name: 'f', args: { value } } }
      expect(lines(`${JSON.stringify(frame)}\n`, 1 << 20, lineLimits('frame', roomy))).toEqual([frame])
    })

    it('counts "__proto__" as a key like any other', () => {
      const head = `{"type":"message","message":{"type":"done","run":1,"value":{"__proto__":0,${keys(MAX_OBJECT_KEYS - 1)}`
      expect(refusalAfter(head, lineLimits('frame', roomy)).why).toBe(`"value" holds an object of more than ${MAX_OBJECT_KEYS} keys, and ${KEY_BOUNDS_RULE}`)
    })

    const objects = MAX_MESSAGE_KEYS / MAX_OBJECT_KEYS
    /** `objects` full objects of distinct keys, as the elements of a list (the first of them opened by the head). */
    const fullObjects = (prefix: string) => Array.from({ length: objects }, (_, index) => `{${keys(MAX_OBJECT_KEYS, `${prefix}${index}.`).slice(0, -1)}}`).join(',')
    const inAll = (field: string) => `"${field}" holds more than ${MAX_MESSAGE_KEYS} keys in all, with the message's other program data, and ${KEY_BOUNDS_RULE}`

    it('refuses a message at its first key past MAX_MESSAGE_KEYS across objects, each within MAX_OBJECT_KEYS', () => {
      const head = `{"type":"message","message":{"type":"call","run":1,"id":1,"global":"g","name":"f","args":[${fullObjects('k')},{`
      expect(refusalAfter(head, lineLimits('frame', roomy))).toEqual({ tookHead: true, tookKey: false, why: inAll('args') })
    })

    it('counts a key as it is read, so keys whose values are still open count against the keys after them', () => {
      // MAX_MESSAGE_KEYS - 10 keys placed, then ten one-key objects nested in each other, all open:
      // their keys are read, their values not yet placed (objects nested a million deep carried a
      // million keys past the bound so).
      const full = (index: number, count: number) => `{${keys(count, `k${index}.`).slice(0, -1)}}`
      const flat = [0, 1, 2].map((index) => full(index, MAX_OBJECT_KEYS)).join(',') + ',' + full(3, MAX_OBJECT_KEYS - 10)
      const chain = Array.from({ length: 10 }, (_, index) => `{"c${index}":`).join('')
      const head = `{"type":"message","message":{"type":"done","run":1,"value":[${flat},${chain}{`
      expect(refusalAfter(head, lineLimits('frame', roomy))).toEqual({ tookHead: true, tookKey: false, why: inAll('value') })
    })

    it('counts the keys of a batch\'s calls together, as one message\'s', () => {
      const calls = Array.from({ length: objects }, (_, index) => call(index + 1, `{${keys(MAX_OBJECT_KEYS, `${index}.`).slice(0, -1)}}`)).join(',')
      const full = `{"type":"calls","run":1,"calls":[${calls}]}`
      expect(readMessage(full, lineLimits('message', roomy))).toEqual({ value: JSON.parse(full) })
      const head = `{"type":"calls","run":1,"calls":[${calls},{"type":"call","run":1,"id":${objects + 1},"global":"g","name":"f","args":{`
      expect(refusalAfter(head, lineLimits('message', roomy))).toEqual({ tookHead: true, tookKey: false, why: inAll('args') })
    })
  })

  describe('program data past MAX_MESSAGE_VALUES', () => {
    const roomy = { ...budget, maxOutputBytes: 1 << 25, maxPendingCallBytes: 1 << 25 }
    const inAll = (field: string) => `"${field}" holds more than ${MAX_MESSAGE_VALUES} values in all, with the message's other program data, and ${KEY_BOUNDS_RULE}`

    /** Whether the reader takes all of `head` and refuses `next`, the first byte of the value past the bound, and why. */
    function refusalAfter(head: string, next: string, kind: 'frame' | 'message' = 'frame') {
      const reader = new JsonLines(lineLimits(kind, roomy), () => true)
      const tookHead = reader.push(Buffer.from(head))
      const tookNext = reader.push(Buffer.from(next))
      return { tookHead, tookNext, why: reader.refusal }
    }

    it('refuses a message at its first list past it, though lists hold no keys', () => {
      // The arguments' list and MAX_MESSAGE_VALUES - 1 empty lists in it.
      const head = `{"type":"message","message":{"type":"call","run":1,"id":1,"global":"g","name":"f","args":[${'[],'.repeat(MAX_MESSAGE_VALUES - 1)}`
      expect(refusalAfter(head, '[')).toEqual({ tookHead: true, tookNext: false, why: inAll('args') })
    })

    it.each([
      ['strings', '"ab",', '"'],
      ['numbers', '7,', '7'],
      ['literals', 'null,', 't'],
    ])('refuses a forged completion at the first of its %s past it, at that value\'s first byte', (_name, element, next) => {
      // The completion's list and MAX_MESSAGE_VALUES - 1 scalars in it: 63 MiB of "ab" built 13 million strings, 614 MB of the host's heap.
      const head = `{"type":"message","message":{"type":"done","run":1,"value":[${element.repeat(MAX_MESSAGE_VALUES - 1)}`
      expect(refusalAfter(head, next)).toEqual({ tookHead: true, tookNext: false, why: inAll('value') })
    })

    it('reads a completion of MAX_MESSAGE_VALUES values, and counts a batch\'s arguments together', () => {
      const value = Array.from({ length: MAX_MESSAGE_VALUES - 1 }, (_, index) => (index % 2 === 0 ? 'ab' : index))
      const done = { type: 'message', message: { type: 'done', run: 1, value } }
      expect(lines(`${JSON.stringify(done)}\n`, 1 << 20, lineLimits('frame', roomy))).toEqual([done])
      // Two calls of a batch, their lists and MAX_MESSAGE_VALUES - 2 strings in all.
      const half = '"ab",'.repeat(MAX_MESSAGE_VALUES / 2 - 1).slice(0, -1)
      const head = `{"type":"calls","run":1,"calls":[{"type":"call","run":1,"id":1,"global":"g","name":"f","args":[${half}]},{"type":"call","run":1,"id":2,"global":"g","name":"f","args":[${half},`
      expect(refusalAfter(head, '"', 'message')).toEqual({ tookHead: true, tookNext: false, why: inAll('args') })
    })
  })

  describe('strings past the bound of their place', () => {
    /** Whether the reader refuses `text` in pieces of `size` bytes, and why. */
    function refusal(text: string, limits: JsonLinesLimits, size: number) {
      const reader = new JsonLines(limits, () => true)
      const bytes = Buffer.from(text)
      for (let at = 0; at < bytes.length; at += size) {
        if (!reader.push(bytes.subarray(at, at + size))) return { refused: true, why: reader.refusal }
      }
      return { refused: false, why: reader.refusal }
    }

    /** A string token of `bytes` bytes on the line, quotes included, with one character past Latin-1 (V8 holds it two-byte). */
    const token = (bytes: number) => `"\\u0100${'a'.repeat(bytes - 8)}"`
    const small = { ...budget, maxOutputBytes: 1000, maxPendingCallBytes: 2000 }
    const message = (fields: string) => `{"type":"message","message":{${fields}}}`

    it.each([
      ['a completion', 'frame', (value: string) => message(`"type":"done","run":1,"value":${value}`), 1000, '"value" is a string of more than 1000 bytes, more than its budget'],
      ['a call\'s arguments', 'frame', (args: string) => message(`"type":"call","run":1,"id":1,"global":"g","name":"f","args":${args}`), 2000, '"args" is a string of more than 2000 bytes, more than its budget'],
      ['the arguments of a call of a batch', 'message', (args: string) => `{"type":"calls","run":1,"calls":[{"type":"call","run":1,"id":1,"global":"g","name":"f","args":${args}}]}`, 2000, '"args" is a string of more than 2000 bytes, more than its budget'],
      ['a failure\'s message', 'frame', (text: string) => message(`"type":"failed","run":1,"kind":"exception","message":${text}`), 65536, "a failure's message is a string of more than 65536 bytes, more than output may hold (maxOutputBytes)"],
      ['an entry of output', 'frame', (text: string) => message(`"type":"output","run":1,"items":[${text}]`), 1000, 'an entry of output is a string of more than 1000 bytes, more than output may hold (maxOutputBytes)'],
      ['a recorded value of crypto.getRandomValues', 'frame', (text: string) => message(`"type":"draws","run":1,"clock":[1],"random":[0.5],"bytes":["00",${text}]`), 2 * MAX_DRAW_BYTES + 2, `"bytes" holds a string of more than ${2 * MAX_DRAW_BYTES + 2} bytes, more than a durable run records (MAX_DRAW_BYTES)`],
      ['a helper frame\'s own message', 'frame', (text: string) => `{"type":"exit","message":${text}}`, FRAME_TEXT_BYTES, `a frame's message is a string of more than ${FRAME_TEXT_BYTES} bytes, more than the helper writes`],
    ] as const)('reads %s of its bound, and refuses one byte more as it passes it, however it is split', (_name, kind, line, bound, why) => {
      const limits = lineLimits(kind, small)
      const within = `${line(token(bound))}\n`
      expect(lines(within, 7, limits)).toEqual([JSON.parse(within)])
      expect(lines(within, within.length, limits)).toEqual([JSON.parse(within)])
      for (const size of [1, 7, 4096, 1 << 20]) expect(refusal(`${line(token(bound + 1))}\n`, limits, size)).toEqual({ refused: true, why })
      // Refused at the byte past the bound, not at the string's end.
      const long = line(token(bound + 100_000))
      const start = long.indexOf('"\\u0100')
      expect(refusedAt(long.slice(0, start + bound + 10), limits)).toBe(start + bound)
    })

    it('refuses a forged completion of one 100 MiB string in one push, at its bound', () => {
      const limits = lineLimits('frame', { maxOutputBytes: 64 << 20, maxPendingCallBytes: 16 << 20, maxPendingCalls: 128 })
      const text = message(`"type":"done","run":1,"value":${token(100 << 20)}`)
      const reader = new JsonLines(limits, () => true)
      expect(reader.push(Buffer.from(text))).toBe(false)
      expect(reader.refusal).toBe(`"value" is a string of more than ${64 << 20} bytes, more than its budget`)
    })

    it('reads a failure\'s message up to maxOutputBytes when output is larger than 64 KiB', () => {
      const limits = lineLimits('message', { ...budget, maxOutputBytes: 100_000 })
      const within = `{"type":"failed","run":1,"kind":"exception","message":${token(100_000)}}\n`
      expect(lines(within, 4096, limits)).toEqual([JSON.parse(within)])
      expect(refusal(`{"type":"failed","run":1,"kind":"exception","message":${token(100_001)}}\n`, limits, 4096).refused).toBe(true)
    })

    it('bounds no key by the string bound of the place it names', () => {
      const limits = lineLimits('frame', small)
      const keyed = `${message(`"type":"done","run":1,"value":{${token(1500)}:1}`)}\n`
      expect(lines(keyed, 7, limits)).toBe('refused') // the completion's bytes refuse it
      const roomy = `${message(`"type":"done","run":1,"value":{${token(900)}:1}`)}\n`
      expect(lines(roomy, 7, limits)).toEqual([JSON.parse(roomy)])
    })
  })

  it('stays refused after a refusal, whatever follows, and says so once', () => {
    let refusals = 0
    const reader = new JsonLines(open, () => true, () => refusals++)
    expect(reader.push(Buffer.from('[1,]\n'))).toBe(false)
    expect(reader.push(Buffer.from('[1]\n'))).toBe(false)
    expect(refusals).toBe(1)
  })
})
