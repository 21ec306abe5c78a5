import { defineConfig } from 'tsup'

// Two entries: the library, and the worker bootstrap that runs inside every Worker. The worker
// must be plain JavaScript on disk because Node 20 cannot load `.ts` files.
export default defineConfig({
  entry: { index: 'src/index.ts', worker: 'src/worker/main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts' } },
  clean: true,
  sourcemap: false,
  splitting: true,
})
