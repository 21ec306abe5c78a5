/**
 * Tries the helper-process host once with every one-shot program and prints `{}` or
 * `{ skipped }` as one JSON line.
 */
import { ONE_SHOT } from './programs.mjs'
import { startSandboxed } from './ours.mjs'

const sandboxed = await startSandboxed({ poolSize: 1 })
let skipped = sandboxed.skipped
for (const program of skipped ? [] : Object.values(ONE_SHOT)) {
  const result = await sandboxed.ours.run({ program, bindings: [{ global: 'tools', functions: { echo: async (value) => value } }] })
  if (result.error) {
    skipped = `a sandboxed run failed (${result.error.kind}): ${result.error.message}`
    break
  }
}
await sandboxed.dispose?.()
console.log(JSON.stringify(skipped ? { skipped } : {}))
