/**
 * The host's packages in a helper's command line: the helper never loads them, so each is bound
 * read-only only where a writable root would let a program change it (each bind costs
 * the start a fraction of a millisecond), and the directories between the root and each of them are made mount
 * points, which no program can move aside. The end-to-end guarantee is in runtime-files.test.ts;
 * this checks the rule on the arguments themselves, without starting bubblewrap.
 */
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bwrapArguments } from '../../src/host/sandbox/bwrap.js'
import { tempDirectory } from '../helpers/sandbox.js'

/** The destinations of `flag` in `args`, in order. */
function destinations(args: string[], flag: '--bind' | '--ro-bind'): string[] {
  return args.flatMap((arg, index) => (arg === flag ? [args[index + 2]!] : []))
}

describe('the host\'s packages in a helper\'s command line', () => {
  const temp = tempDirectory('ptc-protected')
  const workspace = path.join(temp.dir, 'workspace')
  const inside = path.join(workspace, 'node_modules', 'dependency')
  const scoped = path.join(workspace, 'node_modules', '@scope', 'dependency')
  const nested = path.join(inside, 'node_modules', 'own')
  const elsewhere = path.join(temp.dir, 'elsewhere', 'node_modules', 'other')
  for (const directory of [inside, scoped, nested, elsewhere]) mkdirSync(directory, { recursive: true })
  afterAll(temp.remove)

  const args = (mode: 'workspace-write' | 'read-only') => bwrapArguments({
    policy: { mode, workspaceRoot: workspace, network: 'none' },
    cwd: workspace,
    runtimePaths: [process.execPath],
    protectedPaths: [inside, scoped, nested, elsewhere],
    hostCwd: '/',
  }).args

  it('binds a package inside a writable root read-only, after the root', () => {
    const list = args('workspace-write')
    expect(destinations(list, '--ro-bind')).toContain(inside)
    expect(list.lastIndexOf(inside)).toBeGreaterThan(list.indexOf(workspace, list.indexOf('--bind')))
  })

  it('leaves a package outside every writable root to the read-only view of the host', () => {
    expect(destinations(args('workspace-write'), '--ro-bind')).not.toContain(elsewhere)
    expect(destinations(args('read-only'), '--ro-bind')).not.toContain(inside)
  })

  it('makes each directory between a writable root and a package a mount point once, before the packages', () => {
    const list = args('workspace-write')
    const parents = [path.join(workspace, 'node_modules'), path.dirname(scoped)]
    expect(destinations(list, '--bind')).toEqual([workspace, ...parents])
    expect(list.indexOf(parents[1]!)).toBeLessThan(list.indexOf(scoped))
    expect(destinations(args('read-only'), '--bind')).toEqual([])
  })

  it('always binds what the helper runs from', () => {
    expect(destinations(args('read-only'), '--ro-bind')).toContain(process.execPath)
  })
})
