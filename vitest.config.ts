import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/clean-checkout.ts', 'test/setup/build.ts', 'test/setup/container-image.ts'],
    setupFiles: ['test/setup/leaks.ts', 'test/setup/fast-check.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})
