import { defineConfig } from 'tsup'
import { cleanOutput } from './scripts/clean-output.js'
import { commonjsEntries } from './scripts/commonjs-entries.js'

// The library, the `ptc-run` command and the `mcp`, `ai` and `cordis` subpath entries are ES modules
// sharing chunks (one `PtcImage` class for all); only the subpath entries reach their optional
// peer dependencies. The worker bootstrap that runs inside every Worker is one self-contained
// CommonJS file: Node loads that about 5 ms faster per worker than an ES module graph (measured
// here: 49 against 55 ms of CPU per spawn-to-exit cycle), and every environment pays it. The
// helper process that hosts one environment's worker is one too: without Node's ES module loader
// its main thread keeps about 1.2 MB less (measured here: 14.5 against 15.7 MB of private memory
// per retained helper), and every retained conversation pays that.
// Both must be plain JavaScript on disk because Node 20 cannot load `.ts` files.
// The public entries get a CommonJS face too (`<entry>.cjs` and `.d.cts`, the `require`
// condition of `exports`), which loads the same ES modules: see scripts/commonjs-entries.ts.
export default defineConfig([
  {
    entry: { index: 'src/index.ts', mcp: 'src/mcp/index.ts', ai: 'src/ai/index.ts', cordis: 'src/cordis.ts', cli: 'src/cli/main.ts', image: 'src/cli/image.ts', 'typecheck-worker': 'src/tools/typecheck-worker.ts', 'durable-worker': 'src/host/durable/codec-worker.ts', 'eraser-worker': 'src/host/run/eraser-worker.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: { entry: { index: 'src/index.ts', mcp: 'src/mcp/index.ts', ai: 'src/ai/index.ts', cordis: 'src/cordis.ts' } },
    // Both builds run at once: this one cleans everything but the other's output, itself, so
    // that the declaration build does not clean again after the CommonJS entries are written.
    clean: false,
    sourcemap: false,
    splitting: true,
    plugins: [cleanOutput(['worker.cjs', 'worker-snapshot.cjs', 'helper.cjs', 'stream-entry.cjs']), commonjsEntries(['index', 'mcp', 'ai', 'cordis'])],
  },
  {
    entry: { worker: 'src/worker/main.ts', 'worker-snapshot': 'src/worker/snapshot.ts', helper: 'src/helper/main.ts', 'stream-entry': 'src/helper/stream-entry.ts' },
    format: ['cjs'],
    // The helper finds worker.cjs next to itself through `import.meta.url`, and the stream entry
    // (the helper's front door on the stream and container tiers) finds helper.cjs so.
    shims: true,
    target: 'node20',
    platform: 'node',
    sourcemap: false,
    splitting: false,
  },
])
