import fc from 'fast-check'
import type { PtcJsonValue } from '../../src/seam/types.js'

/** One code point or code unit from each JSON byte-cost class, lone surrogates included. */
const unit = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)),
  fc.constantFrom('"', '\\', '\x7f', '\u2028', '\u2029', '\ufeff', '\uffff'),
  fc.integer({ min: 0x80, max: 0x7ff }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x800, max: 0xd7ff }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((code) => String.fromCodePoint(code)),
)

/** Strings mixing every escape class, lone and paired surrogates. */
export const jsonText = fc.string({ unit, maxLength: 40 })

const key = fc.oneof(jsonText, fc.constantFrom('__proto__', 'constructor', 'toString', '0', '10', ''))

const finite = fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => (n === 0 ? 0 : n))

/** Builds records with own data properties, so a generated `__proto__` key stays an own key. */
function record(entries: [string, PtcJsonValue][]): { [key: string]: PtcJsonValue } {
  const result: { [key: string]: PtcJsonValue } = {}
  for (const [name, value] of entries) {
    Object.defineProperty(result, name, { value, writable: true, enumerable: true, configurable: true })
  }
  return result
}

/** Lossless JSON values of every shape. */
export const jsonValue: fc.Arbitrary<PtcJsonValue> = fc.letrec<{ value: PtcJsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    finite,
    fc.integer(),
    jsonText,
    fc.array(tie('value'), { maxLength: 6 }),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 6 }).map(record),
  ),
})).value

/** `[[...[inner]...]]`, built without recursion. */
export function nestedArrays(depth: number, inner: PtcJsonValue = []): PtcJsonValue {
  let value = inner
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

/** `{ a: { a: ... inner } }`, built without recursion. */
export function nestedRecords(depth: number, inner: PtcJsonValue = {}): PtcJsonValue {
  let value = inner
  for (let i = 0; i < depth; i++) value = { a: value }
  return value
}

/** Depth of the chain `nestedArrays` / `nestedRecords` build, measured without recursion. */
export function chainDepth(value: unknown): number {
  let depth = 0
  for (;;) {
    if (Array.isArray(value) && value.length === 1) value = value[0]
    else if (typeof value === 'object' && value !== null && 'a' in value) value = (value as { a: unknown }).a
    else return depth
    depth++
  }
}
