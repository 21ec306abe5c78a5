import { readFileSync } from 'node:fs'
import { isBuiltin } from 'node:module'
import { describe, expect, it } from 'vitest'

const worker = () => readFileSync(new URL('../../dist/worker.cjs', import.meta.url), 'utf8')

describe('the built worker', () => {
  it('is one self-contained file that requires only Node built-ins', () => {
    const required = [...worker().matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]!)
    expect(required.length).toBeGreaterThan(0)
    for (const name of required) expect(isBuiltin(name)).toBe(true)
  })

  it('never loads the transformer parser: every environment would pay for it', () => {
    expect(worker()).not.toMatch(/acorn/)
  })
})
