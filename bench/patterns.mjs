/**
 * `node bench/patterns.mjs`: what a schema `pattern` costs the host when a program chooses the
 * string. Each row is one validated call of a tool, measured on the host side (the tool's
 * wrapper, as the host runs it for a call): an ordinary pattern on an ordinary string is the
 * baseline; the others are the inputs that make a backtracking engine take exponential time,
 * and a long string. Each row also gives the longest time the host's event loop was held
 * while it ran (`monitorEventLoopDelay`), against a bound of 50 ms.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { defineToolGroup } from '../dist/index.js'

const group = defineToolGroup({
  global: 'forms',
  tools: {
    ordinary: { inputSchema: { type: 'object', properties: { id: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' } } }, run: () => null },
    words: { inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: '^(\\w+\\s?)*$' } } }, run: () => null },
    keyed: { inputSchema: { type: 'object', patternProperties: { '^(a+)+$': {} }, additionalProperties: false }, run: () => null },
  },
})
const call = { signal: new AbortController().signal, hold: async () => undefined }
/** Milliseconds per call of `tool` with `args` (refusals count), the mean of `rounds` after a warm-up, and the loop's longest hold. */
async function timed(tool, args, rounds = 50) {
  const once = () => group.namespace.functions[tool](args, call).catch(() => undefined)
  for (let round = 0; round < 5; round++) await once()
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const started = performance.now()
  for (let round = 0; round < rounds; round++) {
    await once()
    await new Promise((resolve) => setImmediate(resolve))
  }
  const ms = (performance.now() - started) / rounds
  delay.disable()
  return { ms, heldMs: delay.max / 1e6 }
}
const LIMIT_MS = 50
const baseline = await timed('ordinary', { id: 'tool_name-1' })
const rows = [
  ['^(\\w+\\s?)*$ on 33 chars and "!"', await timed('words', { text: `${'a'.repeat(33)}!` })],
  ['^(\\w+\\s?)*$ on 100 000 chars', await timed('words', { text: 'ab '.repeat(33_333) }, 10)],
  ['patternProperties ^(a+)+$, 40-char key', await timed('keyed', { [`${'a'.repeat(40)}!`]: 1 })],
]
console.log(`schema patterns on the host: an ordinary pattern takes ${baseline.ms.toFixed(3)} ms per call (baseline)`)
for (const [what, { ms, heldMs }] of rows) {
  console.log(`  ${what.padEnd(40)} ${ms.toFixed(3).padStart(8)} ms  ${(ms / baseline.ms).toFixed(1).padStart(7)}x baseline  loop held at most ${heldMs.toFixed(1)} ms (${heldMs <= LIMIT_MS ? 'within' : 'OVER'} ${LIMIT_MS} ms)`)
}
