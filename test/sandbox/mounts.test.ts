/**
 * The host's check of a helper's writable roots from outside: bubblewrap binds a root by path,
 * so a symlink swapped in while it starts would redirect the bind. The redirected state is
 * built here directly (a bind from another directory at the root's path), as the race leaves it.
 */
import { spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Writable } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { WRAPPER_INPUT_FD } from '../../src/protocol/frames.js'
import { helperWrapper } from '../../src/host/sandbox/bwrap.js'
import { isDead } from '../../src/system/process-sweep.js'
import { checkHelperMounts, checkHelperRoots } from '../../src/host/sandbox/mounts.js'
import { helperOf } from '../../src/host/sandbox/namespace.js'
import { RUNTIME_PATHS } from '../../src/host/sandbox/runtime-files.js'
import { bwrap, tempDirectory } from '../helpers/sandbox.js'

/** Starts `sleep` as the helper under `args`; resolves its host PID and a stop function once it runs. */
async function startHelper(args: string[], input: Buffer) {
  const stdio = ['ignore', 'ignore', 'ignore', 'ignore', 'pipe'] as const
  const child = spawn(bwrap!, [...args, '--', 'sleep', '60'], { stdio: [...stdio] })
  ;(child.stdio[WRAPPER_INPUT_FD] as Writable).end(input)
  const exited = new Promise((resolve) => child.once('exit', resolve))
  for (let waited = 0; waited < 5000 && helperOf(child.pid!) === undefined; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
  const pid = helperOf(child.pid!)
  // bwrap exits first; what ran in its namespace ends a moment later, with the namespace's reaper.
  const gone = async () => {
    for (let waited = 0; waited < 2000 && pid !== undefined && !isDead(pid); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return { pid, stop: async () => { child.kill('SIGKILL'); await exited; await gone() } }
}

describe.skipIf(!bwrap)('checking a helper\'s writable roots from outside', () => {
  const temp = tempDirectory('ptc-sandbox-mounts')
  const root = path.join(temp.dir, 'root')
  const elsewhere = path.join(temp.dir, 'elsewhere')
  mkdirSync(root)
  mkdirSync(elsewhere)
  afterAll(() => temp.remove())
  const wrapper = helperWrapper(bwrap!, { policy: { mode: 'workspace-write', workspaceRoot: root }, cwd: root, runtimePaths: RUNTIME_PATHS })

  it('finds each root bound where the host checked it', async () => {
    const helper = await startHelper(wrapper.args, wrapper.input)
    try {
      expect(wrapper.roots).toEqual([root])
      expect(checkHelperRoots(helper.pid, wrapper.roots)).toBeUndefined()
    } finally {
      await helper.stop()
    }
  })

  it('names a root whose bind leads to another directory', async () => {
    const at = wrapper.args.findIndex((arg, index) => arg === '--bind' && wrapper.args[index + 1] === root)
    const redirected = wrapper.args.with(at + 1, elsewhere)
    const helper = await startHelper(redirected, wrapper.input)
    try {
      expect(checkHelperRoots(helper.pid, [root])).toMatch(`the sandbox does not have the writable root ${root} bound where the host found it`)
    } finally {
      await helper.stop()
    }
  })

  it('finds each root a mount point in the helper', async () => {
    const helper = await startHelper(wrapper.args, wrapper.input)
    try {
      expect(checkHelperMounts(helper.pid, wrapper.roots)).toBeUndefined()
    } finally {
      await helper.stop()
    }
  })

  it('names a root mounted somewhere else, as a symlink on its path at that moment would leave it', async () => {
    // Every mount at the root (its reveal from the private /tmp, its writable bind) lands elsewhere.
    const misplaced = wrapper.args.map((arg) => (arg === root ? elsewhere : arg))
    const helper = await startHelper(misplaced, wrapper.input)
    try {
      expect(checkHelperMounts(helper.pid, [root])).toMatch(`the sandbox does not have ${root} mounted where the host found it`)
    } finally {
      await helper.stop()
    }
  })

  it('has nothing to check once the helper is gone', async () => {
    const helper = await startHelper(wrapper.args, wrapper.input)
    await helper.stop()
    expect(checkHelperRoots(helper.pid, [root])).toBeUndefined()
  })
})
