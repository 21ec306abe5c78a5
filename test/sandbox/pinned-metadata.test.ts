/**
 * Repository metadata under a writable root is bound by descriptor: looked up at each helper
 * start, it lies where a program can write, and bubblewrap follows symlinks in what it binds by
 * path (the roots themselves are checked from outside once the helper runs: mounts.test.ts). A program that swapped a directory holding a `.git` for a symlink as another helper
 * started had the symlink's target bound there (a hidden repository's configuration, readable).
 * The end-to-end guarantee (the metadata stays read-only) is in runtime-files.test.ts.
 */
import { closeSync, existsSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PINNED_FD, bwrapArguments, helperWrapper, openPinned } from '../../src/host/sandbox/bwrap.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, tempDirectory } from '../helpers/sandbox.js'

describe('repository metadata in a helper\'s command line', () => {
  const temp = tempDirectory('ptc-pinned')
  const workspace = path.join(temp.dir, 'workspace')
  const entries = [path.join(workspace, '.git'), path.join(workspace, 'repository', '.git')]
  for (const entry of entries) mkdirSync(entry, { recursive: true })
  mkdirSync(path.join(temp.dir, 'elsewhere', '.git'), { recursive: true })
  symlinkSync(path.join(temp.dir, 'elsewhere'), path.join(workspace, 'link'))
  afterAll(temp.remove)

  const confinement = {
    policy: { mode: 'workspace-write' as const, workspaceRoot: workspace, network: 'none' as const },
    cwd: workspace,
    runtimePaths: [process.execPath],
    hostCwd: '/',
  }

  it('binds each .git read-only by a descriptor, from PINNED_FD on, and never by path', () => {
    const { args, pinned } = bwrapArguments(confinement)
    const byDescriptor = args.flatMap((arg, index) => (arg === '--ro-bind-fd' ? [[args[index + 1], args[index + 2]]] : []))
    expect(byDescriptor).toEqual(entries.map((entry, index) => [String(PINNED_FD + index), entry]))
    expect(pinned).toEqual(entries)
    expect(helperWrapper('bwrap', confinement).pinned).toEqual(entries)
    for (const entry of entries) expect(args.filter((arg) => arg === entry)).toHaveLength(1)
  })

  it('opens what it binds only at the path it was found at', () => {
    const descriptors = openPinned(entries)
    try {
      expect(descriptors.map((fd) => readlinkSync(`/proc/self/fd/${fd}`))).toEqual(entries)
    } finally {
      for (const fd of descriptors) closeSync(fd)
    }
    // A symlinked repository directory (not looked for as one, but a swap can make one of a found path).
    expect(() => openPinned([path.join(workspace, 'link', '.git')])).toThrow(/changed as the helper started/)
    expect(() => openPinned([path.join(workspace, 'gone', '.git')])).toThrow(/ENOENT/)
  })
})

describe.skipIf(!bwrap)('a repository a program moves to and fro as other helpers start', () => {
  const temp = tempDirectory('ptc-pinned-race')
  const root = path.join(temp.dir, 'root')
  afterAll(temp.remove)

  it('stays read-only in every later helper whose start finds it in place', async () => {
    mkdirSync(path.join(root, 'repository', '.git', 'hooks'), { recursive: true })
    mkdirSync(path.join(root, 'deeper'))
    // Entries to look through widen the time between the host's readings of the root.
    for (let index = 0; index < 3000; index++) mkdirSync(path.join(root, `entry-${index}`))
    const env = await startRuntime({ poolSize: 0 })
    const policy = { sandboxPolicy: { mode: 'workspace-write' as const, workspaceRoot: root } }
    const starts = 24
    try {
      // The repository's directory is no mount point in the program's helper (its .git is): it
      // can be moved deeper, where a helper's start does not look, and back, again and again.
      const moving = env.run(`const fs = await import('node:fs')
        while (!fs.existsSync('stop')) {
          for (const [from, to] of [['repository', 'deeper/repository'], ['deeper/repository', 'repository']]) {
            try {
              fs.renameSync(from, to)
            } catch {
              // bubblewrap made an empty repository/.git to mount on while the directory was away
              if (fs.existsSync('deeper/repository')) fs.rmSync('repository', { recursive: true, force: true })
            }
          }
        }
        if (!fs.existsSync('repository')) fs.renameSync('deeper/repository', 'repository')
        return 'stopped'`, { ...policy, timeoutMs: 120_000 })
      // A repository of the program's own, new at each start: each start's metadata differs, so
      // each makes a wrapper of its own, kept for later starts that find the same metadata.
      const marker = (start: number) => path.join(root, `own-${start}`)
      for (let start = 0; start < starts; start++) {
        mkdirSync(path.join(marker(start), '.git'), { recursive: true })
        // A start that catches the repository away is refused, or binds it where it was found.
        await env.run('return 1', policy)
        rmSync(marker(start), { recursive: true })
      }
      writeFileSync(path.join(root, 'stop'), '')
      expect(await moving).toMatchObject({ value: 'stopped' })
      // The repository in place, each start's metadata again: the hook stays unwritten.
      const outcomes: unknown[] = []
      for (let start = 0; start < starts; start++) {
        mkdirSync(path.join(marker(start), '.git'), { recursive: true })
        const result = await env.run(`const fs = await import('node:fs')
          try {
            fs.appendFileSync('repository/.git/hooks/post-checkout', 'echo unconfined\\n')
            return 'written'
          } catch (error) {
            return error.code
          }`, policy)
        outcomes.push(result.value ?? result.error)
        rmSync(marker(start), { recursive: true })
      }
      expect(outcomes).toEqual(Array(starts).fill('EROFS'))
      expect(existsSync(path.join(root, 'repository', '.git', 'hooks', 'post-checkout'))).toBe(false)
    } finally {
      await env.dispose()
    }
  }, 120_000)
})
