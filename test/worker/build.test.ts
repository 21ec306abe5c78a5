import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/** Every file the built worker entry loads, following relative imports. */
function workerClosure(): string[] {
  const seen = new Set<string>()
  const pending = ['worker.js']
  while (pending.length > 0) {
    const file = pending.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    const text = readFileSync(new URL(`../../dist/${file}`, import.meta.url), 'utf8')
    for (const match of text.matchAll(/from "\.\/([^"]+)"/g)) pending.push(match[1]!)
  }
  return [...seen].map((file) => readFileSync(new URL(`../../dist/${file}`, import.meta.url), 'utf8'))
}

describe('the built worker', () => {
  it('never loads the transformer parser: every environment would pay for it', () => {
    for (const text of workerClosure()) expect(text).not.toMatch(/acorn/)
  })
})
