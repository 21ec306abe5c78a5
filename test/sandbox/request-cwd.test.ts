import { mkdirSync, realpathSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CONFINED, startRuntime } from '../helpers/runtime.js'
import { bwrap, tempDirectory } from '../helpers/sandbox.js'

// One rule for a cwd the host names: a request's cwd is shown to the program read-only under
// the default confinement, as a cwd named in the configuration is, never a run-time failure.
describe.skipIf(!bwrap)('a cwd the request names, under the default confinement', () => {
  const temp = tempDirectory('ptc-request-cwd')
  const project = path.join(temp.dir, 'project')
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    mkdirSync(project, { recursive: true })
    writeFileSync(path.join(project, 'notes.txt'), 'from the host')
    env = await startRuntime()
  })
  afterAll(async () => {
    await env.dispose()
    temp.remove()
  })

  it('is shown read-only: the program reads it through relative paths and cannot write there', async () => {
    const program = `const fs = await import('node:fs')
let written
try { fs.writeFileSync('mine.txt', 'x'); written = 'written' } catch (error) { written = error.code }
return [process.cwd(), fs.readFileSync('notes.txt', 'utf8'), written]`
    const result = await env.run(program, { cwd: project })
    expect(result.error).toBeUndefined()
    expect(result.value).toEqual([realpathSync(project), 'from the host', 'EROFS'])
    expect(result.sandbox).toEqual(CONFINED)
  })

  it('resolves to the deployment policy with the cwd as a readable root', () => {
    const spec = env.runtime.resolve({ program: 'return 1', bindings: [], cwd: project })
    expect(spec.cwd).toBe(realpathSync(project))
    expect(spec.sandboxPolicy?.readableRoots).toContain(realpathSync(project))
    // The configuration's own policy is untouched by it.
    expect(env.runtime.resolve({ program: 'return 1', bindings: [] }).sandboxPolicy?.readableRoots).not.toContain(realpathSync(project))
  })
})
