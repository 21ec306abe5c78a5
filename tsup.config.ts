import { defineConfig } from 'tsup'

// Three entries: the library, the worker bootstrap that runs inside every Worker, and the helper
// process that hosts a worker for sandboxed runs. The last two must be plain JavaScript on disk
// because Node 20 cannot load `.ts` files.
export default defineConfig({
  entry: { index: 'src/index.ts', worker: 'src/worker/main.ts', helper: 'src/helper/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts' } },
  clean: true,
  sourcemap: false,
  splitting: true,
})
