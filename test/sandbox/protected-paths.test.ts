/**
 * The host's packages in a helper's command line: the helper never loads them, so each is bound
 * read-only only where a writable root would let a program change it (a bind per package costs
 * the start about 2 ms). The end-to-end guarantee is in runtime-files.test.ts; this checks the
 * rule on the arguments themselves, without starting bubblewrap.
 */
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bwrapArguments } from '../../src/host/sandbox/bwrap.js'
import { tempDirectory } from '../helpers/sandbox.js'

/** The destinations of `--ro-bind` in `args`, in order. */
function readOnlyBinds(args: string[]): string[] {
  return args.flatMap((arg, index) => (arg === '--ro-bind' ? [args[index + 2]!] : []))
}

describe('the host\'s packages in a helper\'s command line', () => {
  const temp = tempDirectory('ptc-protected')
  const workspace = path.join(temp.dir, 'workspace')
  const inside = path.join(workspace, 'node_modules', 'dependency')
  const elsewhere = path.join(temp.dir, 'elsewhere', 'node_modules', 'other')
  for (const directory of [inside, elsewhere]) mkdirSync(directory, { recursive: true })
  afterAll(temp.remove)

  const args = (mode: 'workspace-write' | 'read-only') => bwrapArguments({
    policy: { mode, workspaceRoot: workspace, network: 'none' },
    cwd: workspace,
    runtimePaths: [process.execPath],
    protectedPaths: [inside, elsewhere],
    hostCwd: '/',
  })

  it('binds a package inside a writable root read-only, after the root', () => {
    const list = args('workspace-write')
    expect(readOnlyBinds(list)).toContain(inside)
    expect(list.lastIndexOf(inside)).toBeGreaterThan(list.indexOf(workspace, list.indexOf('--bind')))
  })

  it('leaves a package outside every writable root to the read-only view of the host', () => {
    expect(readOnlyBinds(args('workspace-write'))).not.toContain(elsewhere)
    expect(readOnlyBinds(args('read-only'))).not.toContain(inside)
  })

  it('always binds what the helper runs from', () => {
    expect(readOnlyBinds(args('read-only'))).toContain(process.execPath)
  })
})
