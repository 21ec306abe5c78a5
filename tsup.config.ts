import { defineConfig } from 'tsup'

// The library, the helper process that hosts a worker for sandboxed runs, and the `ptc-run`
// command are ES modules sharing chunks. The worker bootstrap that runs inside every Worker is
// one self-contained CommonJS file: Node loads that about 5 ms faster per worker than an ES
// module graph (measured here: 49 against 55 ms of CPU per spawn-to-exit cycle), and every
// environment pays it. `mcp` and `ai` are subpath entries: only they reach their optional peer
// dependencies, and they share the core's chunks (one `PtcImage` class for both).
// Both must be plain JavaScript on disk because Node 20 cannot load `.ts` files.
export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      mcp: 'src/mcp/index.ts',
      ai: 'src/ai/index.ts',
      helper: 'src/helper/main.ts',
      cli: 'src/cli/main.ts',
    },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: { entry: { index: 'src/index.ts', mcp: 'src/mcp/index.ts', ai: 'src/ai/index.ts' } },
    // Both builds run at once: this one cleans everything but the other's output.
    clean: ['!worker.cjs'],
    sourcemap: false,
    splitting: true,
  },
  {
    entry: { worker: 'src/worker/main.ts' },
    format: ['cjs'],
    target: 'node20',
    platform: 'node',
    sourcemap: false,
    splitting: false,
  },
])
