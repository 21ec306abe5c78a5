import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, processesMatching, tempDirectory } from '../helpers/sandbox.js'

const temp = tempDirectory('ptc-sandbox-lifecycle')
afterAll(() => temp.remove())

/** An executable shell script standing in for bwrap. */
function fakeBwrap(name: string, body: string): string {
  const file = path.join(temp.dir, name)
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}

describe('sandbox-unavailable', () => {
  it('refuses to start a deployment whose policy cannot be confined, saying what to install and the explicit ways out', async () => {
    const start = startRuntime({ sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir, bwrapPath: '/nonexistent/bwrap' } })
    await expect(start).rejects.toThrow(
      /^WorkerPtcRuntime: the sandbox could not be established, so the runtime did not start: bubblewrap was not found \(sandbox\.bwrapPath is "\/nonexistent\/bwrap"\); install it \(apt-get install bubblewrap.*isolation: 'container'.*configure sandbox: 'none'$/,
    )
  })

  it('refuses to start under the default confinement too, from createPtcRuntime, on a machine without bubblewrap', async () => {
    // A PATH that holds node and nothing else: what a machine without bubblewrap looks like.
    const bin = path.join(temp.dir, 'only-node')
    mkdirSync(bin, { recursive: true })
    if (!existsSync(path.join(bin, 'node'))) symlinkSync(process.execPath, path.join(bin, 'node'))
    const program = "import('ptc-runtime').then(({ createPtcRuntime }) => createPtcRuntime()).then(() => console.log('started'), (error) => console.log(error.message))"
    const printed = execFileSync(path.join(bin, 'node'), ['-e', program], { env: { PATH: bin }, cwd: process.cwd(), encoding: 'utf8' })
    expect(printed).toMatch(/^WorkerPtcRuntime: the sandbox could not be established, so the runtime did not start: bubblewrap was not found \(sandbox\.bwrapPath is "bwrap"\); install it .*sandbox: 'none'\n$/)
  })

  it('fails a confined request without running it when bwrap is missing, and still runs danger-full-access', async () => {
    const env = await startRuntime({ sandbox: { mode: 'danger-full-access', workspaceRoot: temp.dir, bwrapPath: 'no-such-bwrap-anywhere' } })
    expect((await env.run('return 1')).value).toBe(1)
    const marker = path.join(temp.dir, 'ran-without-bwrap')
    const result = await env.run(`(await import('node:fs')).writeFileSync(${JSON.stringify(marker)}, 'x')`, { sandboxPolicy: { mode: 'workspace-write', workspaceRoot: temp.dir } })
    expect(result.error).toEqual({
      kind: 'sandbox-unavailable',
      message: expect.stringMatching(/did not run: bubblewrap was not found \(sandbox\.bwrapPath is "no-such-bwrap-anywhere"\); install it \(apt-get install bubblewrap.*configure sandbox: 'none'/),
    })
    expect(result.sandbox).toEqual({ mode: 'workspace-write', network: 'none', denied: false })
    expect(existsSync(marker)).toBe(false)
    await env.dispose()
  })

  it('refuses to start when bwrap fails its start-up probe, with the words of the probe', async () => {
    const broken = fakeBwrap('probe-fails', 'echo "bwrap: setting up uid map: Permission denied" >&2; exit 1')
    await expect(startRuntime({ sandbox: { mode: 'read-only', workspaceRoot: temp.dir, bwrapPath: broken } })).rejects.toThrow(
      /did not start: .*failed its start-up probe: bwrap: setting up uid map: Permission denied/,
    )
  })

  it.skipIf(!bwrap)('fails when the helper dies under bwrap before it is ready', async () => {
    // Passes the probe (which ends in --version), then fails like a mount error would.
    const flaky = fakeBwrap('dies-before-ready', `for last; do :; done\n[ "$last" = "--version" ] && exec ${bwrap} "$@"\necho "bwrap: Can't mount tmpfs on /newroot/tmp: Operation not permitted" >&2\nexit 1`)
    const baseline = await resourceBaseline()
    const env = await startRuntime({ sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir, bwrapPath: flaky } })
    const result = await env.run('return 1')
    expect(result.error).toEqual({
      kind: 'sandbox-unavailable',
      message: expect.stringMatching(/exited with code 1 before it was ready: bwrap: Can't mount tmpfs/),
    })
    expect(result.sandbox).toEqual({ mode: 'workspace-write', network: 'none', denied: false })
    await env.dispose()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it.skipIf(!bwrap)('a helper killed before it is ready is started again; killed twice, the run fails as worker-exit, not as the sandbox', async () => {
    // Passes the probe, then dies by a signal, as a helper the kernel's OOM killer took.
    const starts = path.join(temp.dir, 'starts')
    const killed = fakeBwrap('killed-before-ready', `for last; do :; done\n[ "$last" = "--version" ] && exec ${bwrap} "$@"\necho x >>${starts}\nkill -9 $$`)
    const env = await startRuntime({ poolSize: 0, sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir, bwrapPath: killed } })
    const result = await env.run('return 1')
    expect(result.error).toEqual({ kind: 'worker-exit', message: expect.stringMatching(/could not start, so the program did not run: .*was killed by SIGKILL before it was ready/) })
    expect(readFileSync(starts, 'utf8')).toBe('x\nx\n')
    await env.dispose()
  })
})

describe.skipIf(!bwrap)('sandboxed provider lifecycle', () => {
  it('reports sandbox facts on success and on every kind of failure', async () => {
    const env = await startRuntime({ sandbox: { mode: 'read-only', workspaceRoot: temp.dir } })
    const full = { mode: 'read-only', network: 'none', denied: false, enforcement: 'full' }
    expect((await env.run('return 1')).sandbox).toEqual(full)
    expect((await env.run('throw new Error("plain failure")')).sandbox).toEqual(full)
    expect((await env.run('while (true) {}', { timeoutMs: 300 }))).toMatchObject({ error: { kind: 'timeout' }, sandbox: full })
    expect((await env.run('return (', {})).sandbox).toEqual(full)
    const aborted = new AbortController()
    aborted.abort(new Error('never mind'))
    expect(await env.run('return 1', { signal: aborted.signal })).toMatchObject({ error: { kind: 'abort' }, sandbox: full })
    await env.dispose()
  })

  it('runs danger-full-access in an unconfined helper with a real cwd and no enforcement claim', async () => {
    const env = await startRuntime({ sandbox: { mode: 'danger-full-access', workspaceRoot: temp.dir } })
    expect(env.runtime.executionInstructions).toMatch(/Files and network are not sandboxed/)
    const result = await env.run(`const fs = await import('node:fs'); fs.writeFileSync('free.txt', 'x'); return fs.readlinkSync('/proc/self/cwd')`)
    expect(result).toEqual({ calls: [], output: [], value: temp.dir, sandbox: { mode: 'danger-full-access', network: 'host', denied: false } })
    expect(existsSync(path.join(temp.dir, 'free.txt'))).toBe(true)
    await env.dispose()
  })

  it('disposal aborts in-flight runs with "runtime disposed" and awaits every helper', async () => {
    const baseline = await resourceBaseline()
    const env = await startRuntime({ poolSize: 2, retainState: true, sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } })
    const runs = [
      env.run('while (true) {}', { timeoutMs: null }),
      env.run('await new Promise(() => {})', { timeoutMs: null, stateOwner: {} }),
    ]
    await new Promise((resolve) => setTimeout(resolve, 300))
    await env.dispose()
    for (const result of await Promise.all(runs)) {
      expect(result.error).toEqual({ kind: 'abort', message: 'runtime disposed' })
      expect(result.sandbox?.mode).toBe('workspace-write')
    }
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('pre-spawned helpers never keep the process alive', () => {
    const script = `
      import { Context } from 'cordis'
      import { WorkerPtcRuntime } from 'ptc-runtime/cordis'
      const root = new Context()
      await root.plugin(WorkerPtcRuntime, { poolSize: 2, sandbox: { mode: 'read-only', workspaceRoot: ${JSON.stringify(temp.dir)} } })
      const r = await root.ptcRuntime.run(root.ptcRuntime.resolve({ program: 'return 1', bindings: [] }))
      console.log(JSON.stringify(r))`
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 })
    expect(JSON.parse(output)).toEqual({ calls: [], output: [], value: 1, sandbox: { mode: 'read-only', network: 'none', denied: false, enforcement: 'full' } })
  })

  it('restarts an owner environment when its sandbox policy changes, telling the next run', async () => {
    const other = tempDirectory('ptc-sandbox-policy')
    const env = await startRuntime({ retainState: true, programFormat: 'script', sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } })
    try {
      const owner = {}
      await env.run('var kept = 1', { stateOwner: owner })
      const changed = await env.run('typeof kept', { stateOwner: owner, sandboxPolicy: { mode: 'read-only', workspaceRoot: temp.dir } })
      expect(changed.value).toBe('undefined')
      expect(changed.output[0]).toEqual({ type: 'text', text: '[earlier state was lost because the sandbox policy changed; this run starts in a fresh environment]\n' })
    } finally {
      await env.dispose()
      other.remove()
    }
  })

  it('moves a retained helper to each run cwd: the same environment, a real working directory', async () => {
    const env = await startRuntime({ retainState: true, programFormat: 'script', sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } })
    try {
      const owner = {}
      const inner = path.join(temp.dir, 'inner')
      execFileSync('mkdir', ['-p', inner])
      await env.run('var kept = process.cwd()', { stateOwner: owner })
      const moved = await env.run(`(await import('node:fs')).writeFileSync('here.txt', '1'); [kept, (await import('node:child_process')).execSync('pwd').toString().trim()]`, { stateOwner: owner, cwd: inner })
      expect(moved.value).toEqual([temp.dir, inner])
      expect(existsSync(path.join(inner, 'here.txt'))).toBe(true)
    } finally {
      await env.dispose()
    }
  })

  it('leaves no bubblewrap behind after many freshly started runtimes are disposed', async () => {
    const own = tempDirectory('ptc-sandbox-many') // its path is on every bwrap command line of these runtimes
    try {
      const envs = await Promise.all(Array.from({ length: 6 }, () => startRuntime({ poolSize: 2, sandbox: { mode: 'read-only', workspaceRoot: own.dir } })))
      await Promise.all(envs.map((env) => env.run('return 1')))
      expect(processesMatching(own.dir).length).toBeGreaterThan(0)
      await Promise.all(envs.map((env) => env.dispose()))
      expect(processesMatching(own.dir)).toEqual([])
    } finally {
      own.remove()
    }
  })

})
