/**
 * What a confined program can reach without writing anything: the network, the host's unix
 * sockets (wherever they lie, and abstract ones) and System V IPC. Each server here is real,
 * started by the test outside the sandbox; a broken sandbox would connect to it.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leakedSince, resourceBaseline, type ResourceSnapshot } from '../helpers/leaks.js'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, marker, tempDirectory } from '../helpers/sandbox.js'

/** A server that counts the connections it accepted and greets each one. */
async function listen(address: string | { port: 0; host: string }): Promise<{ server: net.Server; accepted: () => number; address: string | number }> {
  let accepted = 0
  const server = net.createServer((socket) => {
    accepted++
    socket.end('hello from the host')
  })
  await new Promise<void>((resolve) => (typeof address === 'string' ? server.listen(address, resolve) : server.listen(address.port, address.host, resolve)))
  const bound = server.address()
  return { server, accepted: () => accepted, address: typeof bound === 'object' && bound ? bound.port : String(bound) }
}

/** A program that connects to `target` (a socket path, or a loopback port) and returns what it heard, or the error code. */
function connectProgram(target: string | number): string {
  const options = typeof target === 'number' ? `{ port: ${target}, host: '127.0.0.1' }` : `{ path: ${JSON.stringify(target)} }`
  return `const net = await import('node:net')
    return await new Promise((resolve) => {
      const socket = net.connect(${options})
      let heard = ''
      socket.on('data', (chunk) => (heard += chunk))
      socket.on('end', () => resolve(heard))
      socket.on('error', (error) => resolve(error.code))
    })`
}

/** The same connection from a subprocess (a fresh Node), which inherits the confinement. */
function connectFromSubprocess(target: string): string {
  const script = `require('net').connect(${JSON.stringify(target)}).on('data', (d) => process.stdout.write(d)).on('error', (e) => process.stdout.write(e.code))`
  return `const cp = await import('node:child_process')
    return cp.execFileSync(process.execPath, ['-e', ${JSON.stringify(script)}], { encoding: 'utf8' })`
}

const installed = (command: string) => {
  try {
    execFileSync(command, ['--version'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const python = installed('python3')

describe.skipIf(!bwrap)('network and unix sockets under a sandbox policy', () => {
  const temp = tempDirectory('ptc-sandbox-reach')
  const runtimeDir = path.join(os.homedir(), `.ptc-runtime-dir-${marker()}`)
  const savedRuntimeDir = process.env.XDG_RUNTIME_DIR
  const servers: Array<Awaited<ReturnType<typeof listen>>> = []
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot
  let tcp: Awaited<ReturnType<typeof listen>>
  let abstract: Awaited<ReturnType<typeof listen>>
  const places: Record<string, string> = {}

  beforeAll(async () => {
    // The user's runtime directory, as the host's environment names it (outside /run here).
    mkdirSync(runtimeDir)
    process.env.XDG_RUNTIME_DIR = runtimeDir
    const tag = marker()
    Object.assign(places, {
      '/tmp': `/tmp/ptc-reach-${tag}.sock`,
      '/var/tmp': `/var/tmp/ptc-reach-${tag}.sock`,
      '/run': `/run/ptc-reach-${tag}.sock`,
      'the user runtime directory': path.join(runtimeDir, 'bus'),
      'the workspace (visible)': path.join(temp.dir, 'service.sock'),
    })
    for (const [place, file] of Object.entries(places)) {
      try {
        servers.push(await listen(file))
      } catch {
        delete places[place] // not writable for this user: nothing a program could reach there either
      }
    }
    tcp = await listen({ port: 0, host: '127.0.0.1' })
    abstract = await listen(`\0ptc-reach-${tag}`)
    servers.push(tcp, abstract)
    baseline = await resourceBaseline()
    env = await startRuntime({ sandbox: { mode: 'workspace-write', workspaceRoot: temp.dir } })
  })
  afterAll(async () => {
    await env.dispose()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
    for (const { server } of servers) server.close()
    if (savedRuntimeDir === undefined) delete process.env.XDG_RUNTIME_DIR
    else process.env.XDG_RUNTIME_DIR = savedRuntimeDir
    rmSync(runtimeDir, { recursive: true, force: true })
    temp.remove()
  })

  const modes = [
    { mode: 'read-only', network: 'none' },
    { mode: 'workspace-write', network: 'none' },
    { mode: 'workspace-write', network: 'host' },
  ] as const

  it('the test servers answer an unconfined program, so a refusal below is the sandbox', async () => {
    const free = { mode: 'danger-full-access', workspaceRoot: temp.dir } as const
    for (const file of Object.values(places)) {
      expect((await env.run(connectProgram(file), { sandboxPolicy: free })).value).toBe('hello from the host')
    }
    expect((await env.run(connectProgram(abstract.address as string), { sandboxPolicy: free })).value).toBe('hello from the host')
    expect((await env.run(connectProgram(tcp.address as number), { sandboxPolicy: free })).value).toBe('hello from the host')
  })

  it.each(modes)('$mode with network $network cannot connect to a host unix socket in any place', async (policy) => {
    const before = servers.map((server) => server.accepted())
    for (const [place, file] of Object.entries(places)) {
      const result = await env.run(connectProgram(file), { sandboxPolicy: { ...policy, workspaceRoot: temp.dir } })
      expect([place, result.value]).toEqual([place, expect.stringMatching(/^(EPERM|ENOENT)$/)])
    }
    expect(servers.map((server) => server.accepted())).toEqual(before)
  })

  it.each(modes)('$mode with network $network cannot connect to a host abstract socket', async (policy) => {
    const before = abstract.accepted()
    const result = await env.run(connectProgram(abstract.address as string), { sandboxPolicy: { ...policy, workspaceRoot: temp.dir } })
    expect(result.value).toMatch(/^(EPERM|ECONNREFUSED)$/)
    expect(abstract.accepted()).toBe(before)
  })

  it('a subprocess cannot connect to a host unix socket either, even one it can see', async () => {
    const result = await env.run(connectFromSubprocess(places['the workspace (visible)']!))
    expect(result.value).toBe('EPERM')
  })

  it('subprocesses still work, with pipes and an IPC channel (socket pairs)', async () => {
    const result = await env.run(`const cp = await import('node:child_process')
      const piped = cp.execSync('echo piped', { encoding: 'utf8' }).trim()
      const child = cp.spawn(process.execPath, ['-e', 'process.send("over ipc"); process.disconnect()'], { stdio: ['pipe', 'pipe', 'pipe', 'ipc'] })
      const message = await new Promise((resolve) => child.once('message', resolve))
      return [piped, message]`)
    expect(result.value).toEqual(['piped', 'over ipc'])
  })

  it.skipIf(!python)('refuses datagram socket pairs, which can address any socket path, and allows stream pairs', async () => {
    const pair = (type: string) => `import socket\ntry:\n  socket.socketpair(socket.AF_UNIX, socket.${type})\n  print("created")\nexcept OSError as error:\n  print(error.errno)`
    const result = await env.run(`const cp = await import('node:child_process')
      return [${JSON.stringify(pair('SOCK_DGRAM'))}, ${JSON.stringify(pair('SOCK_STREAM'))}].map((script) => cp.execFileSync('python3', ['-c', script], { encoding: 'utf8' }).trim())`)
    expect(result.value).toEqual(['1', 'created'])
  })

  it('has no network by default: the host loopback is not reachable and the facts say so', async () => {
    const result = await env.run(connectProgram(tcp.address as number))
    expect(result.value).toBe('ECONNREFUSED')
    expect(result.sandbox).toEqual({ mode: 'workspace-write', network: 'none', denied: false, enforcement: 'full' })
    expect(env.runtime.executionInstructions).toMatch(/There is no network \(connections fail\) and unix sockets cannot be created/)
  })

  it('reaches the host network when the policy says network: host, and the facts say so', async () => {
    const result = await env.run(connectProgram(tcp.address as number), { sandboxPolicy: { mode: 'workspace-write', workspaceRoot: temp.dir, network: 'host' } })
    expect(result.value).toBe('hello from the host')
    expect(result.sandbox).toEqual({ mode: 'workspace-write', network: 'host', denied: false, enforcement: 'full' })
  })

  it('rejects an unknown network or network: none without confinement, naming the field', () => {
    const resolve = (sandboxPolicy: unknown) => env.runtime.resolve({ program: '', bindings: [], sandboxPolicy: sandboxPolicy as never })
    expect(() => resolve({ mode: 'read-only', workspaceRoot: temp.dir, network: 'lan' })).toThrow(/sandboxPolicy\.network must be one of none, host, got "lan"/)
    expect(() => resolve({ mode: 'danger-full-access', workspaceRoot: temp.dir, network: 'none' })).toThrow(/sandboxPolicy\.network cannot be "none" under danger-full-access/)
  })
})

const ipcmk = installed('ipcmk')
if (bwrap && !ipcmk) console.warn('the IPC namespace test is skipped: ipcmk (util-linux) is not installed')

describe.skipIf(!bwrap || !ipcmk)('System V IPC under a sandbox policy', () => {
  const temp = tempDirectory('ptc-sandbox-ipc')
  let env: Awaited<ReturnType<typeof startRuntime>>

  beforeAll(async () => {
    env = await startRuntime({ sandbox: { mode: 'read-only', workspaceRoot: temp.dir } })
  })
  afterAll(async () => {
    await env.dispose()
    temp.remove()
  })

  const hostQueues = () => execFileSync('ipcs', ['-q'], { encoding: 'utf8' })

  it('a message queue a program creates is private to its helper and gone with it', async () => {
    const before = hostQueues()
    const created = await env.run(`const cp = await import('node:child_process')
      cp.execSync('ipcmk -Q')
      return cp.execSync('ipcs -q', { encoding: 'utf8' }).split('\\n').filter((line) => /^0x/.test(line)).length`)
    expect(created.value).toBe(1)
    expect(hostQueues()).toBe(before)
    const later = await env.run(`const cp = await import('node:child_process')
      return cp.execSync('ipcs -q', { encoding: 'utf8' }).split('\\n').filter((line) => /^0x/.test(line)).length`)
    expect(later.value).toBe(0)
  })
})

describe.skipIf(!bwrap)('the default confinement (no sandbox configured)', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let baseline: ResourceSnapshot

  beforeAll(async () => {
    baseline = await resourceBaseline()
    env = await startRuntime({ retainState: true })
  })
  afterAll(async () => {
    await env.dispose()
    expect(await leakedSince(baseline)).toEqual({ threads: 0, children: [], descriptors: 0 })
  })

  it("another conversation's program cannot reach a debugger one conversation left listening on loopback", async () => {
    const listening = await env.run(`const inspector = await import('node:inspector')
      inspector.open(0, '127.0.0.1')
      return Number(new URL(inspector.url()).port)`, { stateOwner: {} })
    const port = listening.value as number
    expect(port).toBeGreaterThan(0)
    // Its own network namespace: the other environment's loopback has nothing on that port.
    expect((await env.run(connectProgram(port), { stateOwner: {} })).value).toBe('ECONNREFUSED')
  })

  it('has no network and tells the model so', async () => {
    expect(env.runtime.sandboxMode).toBe('workspace-write')
    expect(env.runtime.executionInstructions).toMatch(/There is no network/)
    const result = await env.run(`return Object.keys((await import('node:os')).networkInterfaces())`)
    expect(result).toMatchObject({ value: ['lo'], sandbox: { mode: 'workspace-write', network: 'none', enforcement: 'full' } })
  })
})
