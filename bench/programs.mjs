/**
 * The programs every engine runs, written once as async function bodies with a `tools.echo`
 * binding, and the host-side stamp recorder the binding tables share: the time between two
 * successive host invocations is one full round trip, measured the same way for every engine.
 */

/** One-shot programs of the latency table. */
export const ONE_SHOT = {
  'return 1': 'return 1',
  '3 tool calls': [
    'const a = await tools.echo({ step: 1 })',
    'const b = await tools.echo({ step: a.step + 1 })',
    'const c = await tools.echo({ step: b.step + 1 })',
    'return c.step',
  ].join('\n'),
}

/** `n` sequential binding calls. */
export const sequentialCalls = (n) => `for (let i = 0; i < ${n}; i++) await tools.echo({ i })\nreturn ${n}`

/** `n` calls issued as `Promise.all` batches of `width`. */
export const batchedCalls = (n, width) =>
  `for (let b = 0; b < ${n / width}; b++) await Promise.all(Array.from({ length: ${width} }, (_, i) => tools.echo({ i })))\nreturn ${n}`

/** Host-side binding that stamps every invocation; `echo` answers like `async (x) => x`. */
export function stampingEcho(n) {
  const stamps = new Float64Array(n)
  let count = 0
  return {
    echo: async (value) => {
      if (count < n) stamps[count++] = performance.now()
      return value
    },
    /**
     * Per-call round trips in µs: gaps between successive invocations (width 1), or between the
     * first invocations of successive batches divided by the batch width. The first tenth is
     * dropped as warm-up.
     */
    gaps(width = 1) {
      const gaps = []
      const skip = Math.floor(count / width / 10)
      for (let batch = skip + 1; batch * width < count; batch++) {
        gaps.push(((stamps[batch * width] - stamps[(batch - 1) * width]) * 1000) / width)
      }
      return gaps
    },
  }
}
