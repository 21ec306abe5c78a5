/**
 * The compiler's messages as the model and the host read them: bounded in length inside the
 * check's worker, whatever the compiler said, with what was left out counted.
 */
import { describe, expect, it } from 'vitest'
import { checkedText, describeDiagnostics } from '../../src/tools/typecheck-protocol.js'

const text = checkedText('const a = 1\nreturn a', 'function-body')
const at = (message: string) => ({ code: 2339, start: text.indexOf('const'), message })

describe('describeDiagnostics', () => {
  it('cuts a long message, saying how much', () => {
    const described = describeDiagnostics([at(`Property '${'q'.repeat(50_000)}' does not exist on type '{}'.`)], text, 'function-body')!
    expect(described.length).toBeLessThan(2_300)
    expect(described).toMatch(/^The program does not type-check against the declared tools; nothing ran\.\nTS2339: Property 'q{1900,}…\[\d+ characters cut\] \(line 1, column 1\)$/)
  })

  it('quotes messages up to a total, counting the ones left out', () => {
    const described = describeDiagnostics(Array.from({ length: 12 }, () => at(`Property '${'q'.repeat(1_500)}' does not exist on type '{}'.`)), text, 'function-body')!
    expect(described.length).toBeLessThan(9_000)
    const quoted = described.split('\n').filter((line) => line.startsWith('TS2339')).length
    expect(quoted).toBeLessThan(10)
    expect(described.endsWith(`\n…and ${12 - quoted} more`)).toBe(true)
  })

  it('leaves short messages whole', () => {
    expect(describeDiagnostics([at("Property 'x' does not exist on type '{}'.")], text, 'function-body')).toBe(
      "The program does not type-check against the declared tools; nothing ran.\nTS2339: Property 'x' does not exist on type '{}'. (line 1, column 1)",
    )
  })
})
