import { defineConfig } from 'tsup'

// Four entries: the library, the worker bootstrap that runs inside every Worker, the helper
// process that hosts a worker for sandboxed runs, and the `ptc-run` command. The worker and the
// helper must be plain JavaScript on disk because Node 20 cannot load `.ts` files.
export default defineConfig({
  entry: { index: 'src/index.ts', worker: 'src/worker/main.ts', helper: 'src/helper/main.ts', cli: 'src/cli/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts' } },
  clean: true,
  sourcemap: false,
  splitting: true,
})
