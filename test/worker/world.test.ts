import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'
import { processesMatching } from '../helpers/sandbox.js'

describe('the program world: cwd and subprocesses', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot
  let directory: string
  beforeAll(async () => {
    baseline = await resourceBaseline()
    directory = realpathSync(mkdtempSync(path.join(tmpdir(), 'ptc-world-')))
    writeFileSync(path.join(directory, 'data.txt'), 'hello from the run directory')
    // The run directory is a workspace the deployment grants: confined programs see nothing else of the host's.
    env = await startRuntime({ timeoutMs: 15_000, sandbox: { workspaceRoot: directory } })
  })
  afterAll(async () => {
    await env.dispose()
    rmSync(directory, { recursive: true, force: true })
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('process.cwd() returns the spec cwd', async () => {
    expect((await env.run('return process.cwd()', { cwd: directory })).value).toBe(directory)
  })

  it('relative fs paths resolve against the cwd, sync, callback and promise forms alike', async () => {
    const result = await env.run(
      `const fs = await import('node:fs')
       const fsp = await import('node:fs/promises')
       fs.writeFileSync('out.txt', 'written')
       const viaCallback = await new Promise((resolve, reject) => fs.readFile('data.txt', 'utf8', (e, d) => e ? reject(e) : resolve(d)))
       await fsp.mkdir('sub/dir', { recursive: true })
       await fsp.rename('out.txt', 'sub/dir/moved.txt')
       return [fs.readFileSync('data.txt', 'utf8'), viaCallback, await fsp.readFile('sub/dir/moved.txt', 'utf8'), fs.existsSync('sub')]`,
      { cwd: directory },
    )
    expect(result.value).toEqual(['hello from the run directory', 'hello from the run directory', 'written', true])
  })

  it('subprocesses start in the cwd', async () => {
    const result = await env.run(
      `const { execSync, execFile } = await import('node:child_process')
       const viaExecFile = await new Promise((resolve) => execFile('pwd', (e, out) => resolve(out.trim())))
       return [execSync('pwd').toString().trim(), viaExecFile]`,
      { cwd: directory },
    )
    expect(result.value).toEqual([directory, directory])
  })

  it('kills the subprocesses a program started when its run settles', async () => {
    const result = await env.run(
      `const { spawn } = await import('node:child_process')
       const child = spawn('sh', ['-c', 'sleep 30.0418 & sleep 30.0418; wait'])
       return child.pid`,
    )
    expect(typeof result.value).toBe('number')
    expect(processesMatching('sleep 30.0418')).toEqual([])
  })

  it('kills subprocesses of a run that timed out', async () => {
    const result = await env.run(
      `const { spawn } = await import('node:child_process')
       spawn('sleep', ['30.0417'])
       while (true) {}`,
      { timeoutMs: 500 },
    )
    expect(result.error?.kind).toBe('timeout')
    expect(processesMatching('sleep 30.0417')).toEqual([])
  })
})
