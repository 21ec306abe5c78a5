/**
 * The host looks for repositories (`.git`) in each writable root at every confined helper's
 * start, on its own event loop, in a directory a program can fill. What it reads there is
 * bounded: past a count of entries, or of repositories, the helper is not started and the
 * run fails `sandbox-unavailable`, naming the root and the rule, instead of the host reading
 * as much as a program made.
 */
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_REPOSITORIES, MAX_ROOT_ENTRIES, repositoryMetadata } from '../../src/host/sandbox/repositories.js'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, tempDirectory } from '../helpers/sandbox.js'

describe('the repositories looked for in a writable root', () => {
  const temp = tempDirectory('ptc-repository-scan')
  afterAll(temp.remove)

  it('are the .git entries at the root and one level below it', () => {
    const root = path.join(temp.dir, 'few')
    for (const dir of ['.git', 'a/.git', 'b', 'c/d/.git']) mkdirSync(path.join(root, dir), { recursive: true })
    expect(repositoryMetadata(root).sort()).toEqual([path.join(root, '.git'), path.join(root, 'a', '.git')])
  })

  it('refuses a root with more entries than it reads, naming the root and the bound', () => {
    const root = path.join(temp.dir, 'crowded')
    for (let index = 0; index <= MAX_ROOT_ENTRIES; index++) mkdirSync(path.join(root, `entry-${index}`), { recursive: true })
    expect(() => repositoryMetadata(root)).toThrow(
      `the writable root ${root} holds more than ${MAX_ROOT_ENTRIES} entries; repositories (.git) are looked for among at most that many at each helper start`,
    )
  })

  it('refuses a root with more repositories than a helper binds', () => {
    const root = path.join(temp.dir, 'repositories')
    for (let index = 0; index <= MAX_REPOSITORIES; index++) mkdirSync(path.join(root, `repository-${index}`, '.git'), { recursive: true })
    expect(() => repositoryMetadata(root)).toThrow(
      `the writable root ${root} holds more than ${MAX_REPOSITORIES} repositories (.git); a helper binds the metadata of at most that many read-only`,
    )
  })
})

describe.skipIf(!bwrap)('a program that fills its writable root', () => {
  const temp = tempDirectory('ptc-repository-fill')
  const shared = path.join(temp.dir, 'shared')
  const other = path.join(temp.dir, 'other')
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot

  beforeAll(async () => {
    for (const dir of [shared, other]) mkdirSync(dir)
    baseline = await resourceBaseline()
    env = await startRuntime({ poolSize: 0 })
  })
  afterAll(async () => {
    await env.dispose()
    temp.remove()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('fails later runs there as sandbox-unavailable; the host and other roots go on', async () => {
    const policy = (root: string) => ({ sandboxPolicy: { mode: 'workspace-write' as const, workspaceRoot: root } })
    const fill = `const fs = await import('node:fs')
      for (let index = 0; index <= ${MAX_ROOT_ENTRIES}; index++) fs.mkdirSync(\`entry-\${index}\`)
      return 'filled'`
    expect(await env.run(fill, policy(shared))).toMatchObject({ value: 'filled' })
    const refused = await env.run('return 1', policy(shared))
    expect(refused.error).toEqual({
      kind: 'sandbox-unavailable',
      message: expect.stringContaining(`the writable root ${shared} holds more than ${MAX_ROOT_ENTRIES} entries`),
    })
    expect(await env.run('return 2', policy(other))).toMatchObject({ value: 2 })
  })
})
