/**
 * Repository metadata under a writable root is bound by descriptor: looked up at each helper
 * start, it lies where a program can write, and bubblewrap follows symlinks in what it binds by
 * path (the roots themselves are checked from outside once the helper runs: mounts.test.ts). A program that swapped a directory holding a `.git` for a symlink as another helper
 * started had the symlink's target bound there (a hidden repository's configuration, readable).
 * The end-to-end guarantee (the metadata stays read-only) is in runtime-files.test.ts.
 */
import { closeSync, mkdirSync, readlinkSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { PINNED_FD, bwrapArguments, helperWrapper, openPinned } from '../../src/host/sandbox/bwrap.js'
import { tempDirectory } from '../helpers/sandbox.js'

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
