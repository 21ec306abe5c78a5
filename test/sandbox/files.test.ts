import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, marker, tempDirectory } from '../helpers/sandbox.js'

const fsProgram = (body: string) => `const fs = await import('node:fs'); const cp = await import('node:child_process');\n${body}`

/** A path outside os.tmpdir() that only a broken sandbox could create (removed if it does). */
function outsideProbe(): string {
  return path.join(os.homedir(), `.ptc-sandbox-probe-${marker()}`)
}

describe.skipIf(!bwrap)('file confinement', () => {
  const temp = tempDirectory('ptc-sandbox-files')
  const ws = path.join(temp.dir, 'ws')
  const extra = path.join(temp.dir, 'extra')
  const outside = path.join(temp.dir, 'outside')
  const probes: string[] = []
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot

  beforeAll(async () => {
    for (const dir of [ws, extra, outside, path.join(ws, 'sub')]) mkdirSync(dir, { recursive: true })
    writeFileSync(path.join(ws, 'input.txt'), 'from the host')
    baseline = await resourceBaseline()
    env = await startRuntime({ sandbox: { mode: 'workspace-write', workspaceRoot: ws, writableRoots: [extra] } })
  })
  afterAll(async () => {
    await env.dispose()
    for (const probe of probes) rmSync(probe, { force: true }) // only a failed test could have created one
    temp.remove()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it('reports the deployment mode and tells the model where it may write', () => {
    expect(env.runtime.sandboxMode).toBe('workspace-write')
    expect(env.runtime.isolation).toBe('process')
    expect(env.runtime.executionInstructions).toContain(`You may write only inside ${ws}, ${extra} and /tmp`)
  })

  it('defaults cwd to the workspace root and attaches the deployment policy', () => {
    expect(env.runtime.resolve({ program: '', bindings: [] })).toMatchObject({
      cwd: ws,
      sandboxPolicy: { mode: 'workspace-write', workspaceRoot: ws, writableRoots: [extra] },
    })
  })

  it('read-only denies a write: exception, denied, and no file', async () => {
    const target = path.join(ws, 'written.txt')
    const result = await env.run(fsProgram(`fs.writeFileSync(${JSON.stringify(target)}, 'x')`), {
      sandboxPolicy: { mode: 'read-only', workspaceRoot: ws },
    })
    expect(result.error).toEqual({ kind: 'exception', message: expect.stringMatching(/EROFS: read-only file system/) })
    expect(result.sandbox).toEqual({ mode: 'read-only', network: 'none', denied: true, enforcement: 'full' })
    expect(existsSync(target)).toBe(false)
  })

  it('read-only still reads the host file system', async () => {
    const result = await env.run(fsProgram(`return fs.readFileSync('input.txt', 'utf8')`), {
      sandboxPolicy: { mode: 'read-only', workspaceRoot: ws },
    })
    expect(result).toEqual({ calls: [], output: [], value: 'from the host', sandbox: { mode: 'read-only', network: 'none', denied: false, enforcement: 'full' } })
  })

  it('workspace-write allows writes inside the workspace root and the writable roots', async () => {
    const result = await env.run(fsProgram(`
      fs.writeFileSync('inside.txt', 'root')
      fs.writeFileSync(${JSON.stringify(path.join(extra, 'extra.txt'))}, 'extra')
      return 'written'`))
    expect(result.value).toBe('written')
    expect(readFileSync(path.join(ws, 'inside.txt'), 'utf8')).toBe('root')
    expect(readFileSync(path.join(extra, 'extra.txt'), 'utf8')).toBe('extra')
  })

  it('workspace-write denies writes outside its roots', async () => {
    const probe = outsideProbe()
    probes.push(probe)
    const result = await env.run(fsProgram(`fs.writeFileSync(${JSON.stringify(probe)}, 'escaped')`))
    expect(result.error?.kind).toBe('exception')
    expect(result.sandbox).toEqual({ mode: 'workspace-write', network: 'none', denied: true, enforcement: 'full' })
    expect(existsSync(probe)).toBe(false)
  })

  it('workspace-write denies writes through a symlink that leads outside the roots', async () => {
    const probe = outsideProbe()
    probes.push(probe)
    symlinkSync(os.homedir(), path.join(ws, 'home-link'))
    const result = await env.run(fsProgram(`fs.writeFileSync(${JSON.stringify(`home-link/${path.basename(probe)}`)}, 'escaped')`))
    expect(result.error?.message).toMatch(/EROFS/)
    expect(result.sandbox?.denied).toBe(true)
    expect(existsSync(probe)).toBe(false)
  })

  it('a symlink to the host /tmp outside the roots leads into the private /tmp, not the host', async () => {
    symlinkSync(outside, path.join(ws, 'outside-link'))
    const result = await env.run(fsProgram(`
      try { fs.mkdirSync(fs.readlinkSync('outside-link'), { recursive: true }) } catch {}
      fs.writeFileSync('outside-link/escaped.txt', 'x')
      return fs.readFileSync('outside-link/escaped.txt', 'utf8')`))
    expect(result.value).toBe('x')
    expect(existsSync(path.join(outside, 'escaped.txt'))).toBe(false)
  })

  it('refuses a run whose writable root passes through a symlink, naming the path', async () => {
    const link = path.join(temp.dir, 'ws-link')
    symlinkSync(ws, link)
    const result = await env.run(fsProgram(`fs.writeFileSync('via-link.txt', 'x')`), {
      sandboxPolicy: { mode: 'workspace-write', workspaceRoot: link },
    })
    expect(result.error).toEqual({ kind: 'sandbox-unavailable', message: expect.stringContaining(`the writable root ${link} passes through a symlink`) })
    expect(existsSync(path.join(ws, 'via-link.txt'))).toBe(false)
  })

  it('a directory a program replaced with a symlink cannot redirect a later run rooted there', async () => {
    mkdirSync(path.join(ws, 'project'))
    const planted = await env.run(fsProgram(`fs.rmdirSync('project'); fs.symlinkSync(${JSON.stringify(outside)}, 'project'); return 'planted'`))
    expect(planted.value).toBe('planted')
    const later = await env.run(fsProgram(`fs.writeFileSync('redirected.txt', 'x')`), {
      sandboxPolicy: { mode: 'workspace-write', workspaceRoot: path.join(ws, 'project') },
    })
    expect(later.error).toEqual({ kind: 'sandbox-unavailable', message: expect.stringContaining(`${path.join(ws, 'project')} passes through a symlink`) })
    expect(existsSync(path.join(outside, 'redirected.txt'))).toBe(false)
  })

  it('a symlink a program planted cannot show a later run a hidden place as its readable or read-only root', async () => {
    writeFileSync(path.join(outside, 'hidden.txt'), 'hidden')
    const planted = await env.run(fsProgram(`fs.symlinkSync(${JSON.stringify(outside)}, 'peek'); return 'planted'`))
    expect(planted.value).toBe('planted')
    const peek = path.join(ws, 'peek')
    for (const sandboxPolicy of [{ mode: 'read-only' as const, workspaceRoot: peek }, { mode: 'workspace-write' as const, workspaceRoot: ws, readableRoots: [peek] }]) {
      const later = await env.run(fsProgram(`return fs.readFileSync(${JSON.stringify(path.join(peek, 'hidden.txt'))}, 'utf8')`), { sandboxPolicy })
      expect(later.error).toEqual({ kind: 'sandbox-unavailable', message: expect.stringContaining(`${peek} passes through a symlink`) })
    }
  })

  it('binds a deployment workspace root given through a symlink by the path it resolved to at load', async () => {
    const link = path.join(temp.dir, 'config-link')
    symlinkSync(ws, link)
    const linked = await startRuntime({ sandbox: { mode: 'workspace-write', workspaceRoot: link } })
    expect(linked.runtime.resolve({ program: '', bindings: [] })).toMatchObject({ cwd: ws, sandboxPolicy: { workspaceRoot: ws } })
    const result = await linked.run(fsProgram(`fs.writeFileSync('via-config-link.txt', 'x'); return process.cwd()`))
    await linked.dispose()
    expect(result.value).toBe(ws)
    expect(readFileSync(path.join(ws, 'via-config-link.txt'), 'utf8')).toBe('x')
  })

  it('writes to /tmp stay private to the environment', async () => {
    const file = `/tmp/ptc-private-${marker()}`
    const first = await env.run(fsProgram(`fs.writeFileSync(${JSON.stringify(file)}, 'mine'); return fs.readFileSync(${JSON.stringify(file)}, 'utf8')`))
    expect(first.value).toBe('mine')
    expect(existsSync(file)).toBe(false)
    const second = await env.run(fsProgram(`return fs.existsSync(${JSON.stringify(file)})`))
    expect(second.value).toBe(false)
  })

  it('relative paths and subprocesses use the run cwd', async () => {
    const cwd = path.join(ws, 'sub')
    const result = await env.run(
      fsProgram(`
        fs.writeFileSync('by-fs.txt', 'fs')
        cp.execSync('echo sh > by-shell.txt')
        return [process.cwd(), cp.execSync('pwd').toString().trim(), fs.readlinkSync('/proc/self/cwd')]`),
      { cwd },
    )
    // The last one is the helper's OS-level cwd, which no JavaScript emulation can fake.
    expect(result.value).toEqual([cwd, cwd, cwd])
    expect(readFileSync(path.join(cwd, 'by-fs.txt'), 'utf8')).toBe('fs')
    expect(readFileSync(path.join(cwd, 'by-shell.txt'), 'utf8')).toBe('sh\n')
  })

  it('subprocesses are confined too', async () => {
    const probe = outsideProbe()
    probes.push(probe)
    const result = await env.run(fsProgram(`cp.execSync(${JSON.stringify(`echo x > ${probe}`)}, { stdio: 'pipe' })`))
    expect(result.error?.message).toMatch(/Read-only file system/)
    expect(result.sandbox?.denied).toBe(true)
    expect(existsSync(probe)).toBe(false)
  })

  it('rejects an explicit policy with an unknown mode or a relative root, naming the field', () => {
    const resolve = (sandboxPolicy: unknown) =>
      env.runtime.resolve({ program: '', bindings: [], sandboxPolicy: sandboxPolicy as never })
    expect(() => resolve({ mode: 'everything', workspaceRoot: ws })).toThrow(/sandboxPolicy\.mode must be one of read-only, workspace-write, danger-full-access/)
    expect(() => resolve({ mode: 'read-only', workspaceRoot: 'ws' })).toThrow(/sandboxPolicy\.workspaceRoot must be an absolute path, got "ws"/)
    expect(() => resolve({ mode: 'workspace-write', workspaceRoot: ws, writableRoots: ['rel'] })).toThrow(/sandboxPolicy\.writableRoots\[0\] must be an absolute path/)
    expect(() => resolve({ mode: 'read-only', workspaceRoot: path.join(ws, 'missing') })).toThrow(/must be an existing directory/)
  })

  it('run rejects a hand-made spec with an invalid policy', async () => {
    const spec = { program: 'return 1', bindings: [], cwd: ws, timeoutMs: 1000, sandboxPolicy: { mode: 'nope', workspaceRoot: ws } }
    await expect(env.runtime.run(spec as never)).rejects.toThrow(/spec\.sandboxPolicy\.mode must be one of/)
  })
})

describe.skipIf(!bwrap)("the host user's home and the host's working directory", () => {
  const temp = tempDirectory('ptc-sandbox-hidden')
  const secret = path.join(os.homedir(), `.ptc-sandbox-secret-${marker()}`)
  let env: Awaited<ReturnType<typeof startRuntime>>

  beforeAll(async () => {
    writeFileSync(secret, 'the host user\'s secret')
    env = await startRuntime({ sandbox: { mode: 'read-only', workspaceRoot: temp.dir } })
  })
  afterAll(async () => {
    await env.dispose()
    rmSync(secret, { force: true })
    temp.remove()
  })

  const look = (file: string) => fsProgram(`try { return fs.readFileSync(${JSON.stringify(file)}, 'utf8') } catch (error) { return error.code }`)

  it('are out of sight of an explicit read-only policy', async () => {
    expect((await env.run(look(secret))).value).toBe('ENOENT')
    // The host's working directory here is the repository: its sources are the host's, not the runtime's.
    expect((await env.run(look(path.join(process.cwd(), 'README.md')))).value).toBe('ENOENT')
  })

  it('show what a policy names as a readable root, read-only', async () => {
    const result = await env.run(fsProgram(`
      const content = fs.readFileSync(${JSON.stringify(secret)}, 'utf8')
      try { fs.appendFileSync(${JSON.stringify(secret)}, 'x') } catch (error) { return [content, error.code] }
      return [content, 'appended']`), { sandboxPolicy: { mode: 'read-only', workspaceRoot: temp.dir, readableRoots: [os.homedir()] } })
    expect(result.value).toEqual(["the host user's secret", 'EROFS'])
  })

  it('cannot be written, so hiding them gives a program no room to store data', async () => {
    const result = await env.run(fsProgram(`try { fs.writeFileSync(${JSON.stringify(path.join(os.homedir(), 'planted'))}, 'x') } catch (error) { return error.code }`))
    expect(result.value).toBe('EROFS')
  })
})
