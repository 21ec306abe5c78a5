/**
 * The host looks for repositories (`.git`) in each writable root at every confined helper's
 * start, on its own event loop, in a directory a program can fill. What it reads there is
 * bounded: past a count of entries, or of repositories, the helper is not started and the
 * run fails `sandbox-unavailable`, naming the root and the rule, instead of the host reading
 * as much as a program made.
 */
import { chmodSync, linkSync, mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_REPOSITORIES, MAX_ROOT_BYTES, MAX_ROOT_ENTRIES, repositoryMetadata } from '../../src/host/sandbox/repositories.js'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, tempDirectory } from '../helpers/sandbox.js'

/**
 * A program's way to grow its root's directory at little cost: hard links to one file (a name
 * each, no file), 250 bytes long, then all removed. A directory keeps the size its most entries
 * took on ext4, the usual Linux file system; tmpfs gives it back.
 */
const GROW_AND_EMPTY = `const fs = await import('node:fs')
const name = (index) => String(index).padStart(250, 'x')
fs.writeFileSync('target', '')
for (let index = 0; index < 30000; index++) fs.linkSync('target', name(index))
for (let index = 0; index < 30000; index++) fs.unlinkSync(name(index))
fs.unlinkSync('target')
return fs.readdirSync('.').length`

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

  it('refuses a root whose directory grew past what that many entries take, even once emptied: reading it walks all it once held', (context) => {
    const root = path.join(temp.dir, 'emptied')
    mkdirSync(root)
    const name = (index: number) => path.join(root, String(index).padStart(250, 'x'))
    writeFileSync(path.join(root, 'target'), '')
    for (let index = 0; index < 30_000; index++) linkSync(path.join(root, 'target'), name(index))
    for (let index = 0; index < 30_000; index++) unlinkSync(name(index))
    unlinkSync(path.join(root, 'target'))
    expect(readdirSync(root)).toEqual([])
    if (statSync(root).size <= MAX_ROOT_BYTES) return context.skip() // a file system that gave the room back
    expect(() => repositoryMetadata(root)).toThrow(`the writable root ${root} is a directory of ${statSync(root).size} bytes`)
  })

  it('refuses a root with more repositories than a helper binds', () => {
    const root = path.join(temp.dir, 'repositories')
    for (let index = 0; index <= MAX_REPOSITORIES; index++) mkdirSync(path.join(root, `repository-${index}`, '.git'), { recursive: true })
    expect(() => repositoryMetadata(root)).toThrow(
      `the writable root ${root} holds more than ${MAX_REPOSITORIES} repositories (.git); a helper binds the metadata of at most that many read-only`,
    )
  })

  it('refuses a root it cannot read rather than protect none of the repositories in it', () => {
    const file = path.join(temp.dir, 'a-file')
    writeFileSync(file, '')
    expect(() => repositoryMetadata(file)).toThrow(`the writable root ${file} cannot be read for repositories (.git): ENOTDIR`)
  })

  // The host's user is the program's: a program can take the host's read permission away from its
  // root, or from a directory in it. Root reads them anyway, so this needs a host of another user.
  it.skipIf(process.getuid?.() === 0)('refuses a root, or a directory in it, the program made unreadable', () => {
    const root = path.join(temp.dir, 'locked')
    mkdirSync(path.join(root, 'repository', '.git'), { recursive: true })
    try {
      chmodSync(root, 0o300)
      expect(() => repositoryMetadata(root)).toThrow(`the writable root ${root} cannot be read for repositories (.git): EACCES`)
      chmodSync(root, 0o700)
      chmodSync(path.join(root, 'repository'), 0o000)
      expect(() => repositoryMetadata(root)).toThrow(`${path.join(root, 'repository')} cannot be read for repositories (.git): EACCES`)
    } finally {
      chmodSync(root, 0o700)
      chmodSync(path.join(root, 'repository'), 0o700)
    }
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

  it('fails later runs in a root it grew and emptied as sandbox-unavailable; the host and other roots go on', async (context) => {
    const grown = path.join(temp.dir, 'grown')
    mkdirSync(grown)
    const policy = (root: string) => ({ sandboxPolicy: { mode: 'workspace-write' as const, workspaceRoot: root } })
    expect(await env.run(GROW_AND_EMPTY, { ...policy(grown), timeoutMs: 60_000 })).toMatchObject({ value: 0 })
    if (statSync(grown).size <= MAX_ROOT_BYTES) return context.skip() // a file system that gave the room back
    const refused = await env.run('return 1', policy(grown))
    expect(refused.error).toEqual({
      kind: 'sandbox-unavailable',
      message: expect.stringContaining(`the writable root ${grown} is a directory of ${statSync(grown).size} bytes`),
    })
    expect(await env.run('return 2', policy(other))).toMatchObject({ value: 2 })
  }, 60_000)
})

describe.skipIf(!bwrap)('a deployment whose own writable root is past the bounds', () => {
  const temp = tempDirectory('ptc-repository-deployment')
  afterAll(temp.remove)

  it('fails at start, naming the root and the bound, instead of failing every run', async () => {
    const root = path.join(temp.dir, 'crowded')
    for (let index = 0; index <= MAX_ROOT_ENTRIES; index++) mkdirSync(path.join(root, `entry-${index}`), { recursive: true })
    await expect(startRuntime({ sandbox: { mode: 'workspace-write', workspaceRoot: root } })).rejects.toThrow(
      `the sandbox could not be established, so the runtime did not start: the writable root ${root} holds more than ${MAX_ROOT_ENTRIES} entries`,
    )
  })
})
