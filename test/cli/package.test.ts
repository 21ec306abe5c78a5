import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))

it('the published package holds the build, the docs a user reads, and the license only', async () => {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root })
  const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>
  const files = pack!.files.map((file) => file.path)
  const outside = files.filter((file) => !file.startsWith('dist/'))
  expect(outside.sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'package.json'])
  expect(files).toEqual(
    expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/mcp.js', 'dist/mcp.d.ts', 'dist/ai.js', 'dist/ai.d.ts', 'dist/worker.cjs', 'dist/helper.js', 'dist/cli.js']),
  )
  // Declarations ship (the entries' and the chunks they share); sources and source maps do not.
  expect(files.filter((file) => file.endsWith('.map') || (file.endsWith('.ts') && !file.endsWith('.d.ts')))).toEqual([])
})
