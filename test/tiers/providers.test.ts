import { spawn } from 'node:child_process'
import { Duplex } from 'node:stream'
import { describe, expect, it, vi } from 'vitest'
import { type PtcByteStream, type PtcSandboxProvider, type PtcSandboxRequest, PtcSandboxLost } from 'ptc-runtime'
import { STREAM_PROTOCOL_VERSION } from '../../src/protocol/frames.js'
import { startRuntime } from '../helpers/runtime.js'
import { ENTRY, localStream, startSignal } from '../helpers/stream.js'


/** A far end that writes `lines` and then waits: an entry of another version, or not an entry at all. */
function impostor(...lines: string[]): PtcByteStream {
  const stream = new Duplex({ read() {}, write: (_chunk, _encoding, callback) => callback() })
  setImmediate(() => lines.forEach((line) => stream.push(`${line}\n`)))
  return stream
}

/**
 * A provider over local entries that records what it was asked and released. `far` chooses
 * the stream of the n-th sandbox (from 0); by default a real local entry.
 */
function recordingProvider(far: (n: number) => PtcByteStream | Promise<PtcByteStream> = () => localStream()) {
  const requests: PtcSandboxRequest[] = []
  const released: string[] = []
  const streams: PtcByteStream[] = []
  const provider: PtcSandboxProvider = {
    name: 'recorded',
    async acquire(request) {
      requests.push(request)
      const stream = await far(requests.length - 1)
      streams.push(stream)
      return { stream, release: () => void released.push(request.id) }
    },
  }
  return { provider, requests, released, streams }
}

describe('the version handshake', () => {
  it('fails the start naming both versions when the far entry speaks another protocol', async () => {
    const { provider } = recordingProvider(() => impostor(`["hello",${STREAM_PROTOCOL_VERSION + 7}]`))
    await expect(startRuntime({ isolation: { provider } })).rejects.toThrow(
      `the sandbox could not be established, so the runtime did not start: the far end of the stream speaks protocol ${STREAM_PROTOCOL_VERSION + 7}, and this host speaks stream protocol ${STREAM_PROTOCOL_VERSION}`,
    )
  })

  it('fails the start when the far end announces no version, as an entry before the handshake did', async () => {
    const { provider } = recordingProvider(() => impostor('["channel",{"type":"ready","cwd":"/"}]'))
    await expect(startRuntime({ isolation: { provider } })).rejects.toThrow(/announced no protocol version \(an entry from before the version handshake\)/)
  })

  it('fails the start when the far end is not a stream entry at all', async () => {
    const { provider } = recordingProvider(() => impostor('sh: 1: node: not found'))
    await expect(startRuntime({ isolation: { provider } })).rejects.toThrow(/the far end of the stream is not a stream entry/)
  })

  it('fails a run as sandbox-unavailable when a later sandbox runs another version', async () => {
    const { provider, released, requests } = recordingProvider((n) => (n === 0 ? localStream() : impostor('["hello",1]')))
    const env = await startRuntime({ isolation: { provider }, poolSize: 0 })
    try {
      const result = await env.run('return 1')
      expect(result.error?.kind).toBe('sandbox-unavailable')
      expect(result.error?.message).toContain(`speaks protocol 1, and this host speaks stream protocol ${STREAM_PROTOCOL_VERSION}`)
    } finally {
      await env.dispose()
    }
    expect(released.sort()).toEqual(requests.map((request) => request.id).sort())
  })

  it('has the entry refuse a host of another protocol, naming both', async () => {
    const entry = spawn(process.execPath, [ENTRY], { stdio: ['pipe', 'pipe', 'inherit'] })
    let out = ''
    entry.stdout.setEncoding('utf8').on('data', (text: string) => (out += text))
    entry.stdin.write('["start",{"protocol":1,"helper":{"maxOldGenerationSizeMb":64,"subprocessMarker":"x"},"maxMemoryMb":64,"maxFrameBytes":65536,"baseline":{"node":"","kb":0}}]\n')
    const code = await new Promise((resolve) => entry.once('exit', resolve))
    expect(code).toBe(1)
    const lines = out.trim().split('\n').map((line) => JSON.parse(line) as unknown[])
    expect(lines[0]).toEqual(['hello', STREAM_PROTOCOL_VERSION])
    expect(lines[1]).toEqual(['ended', `could not be started: the stream entry speaks protocol ${STREAM_PROTOCOL_VERSION} and the host protocol 1; deploy the entry of the host's ptc-runtime`, false])
  })
})

describe('a sandbox provider', () => {
  it('is asked for each environment with its id and the configured budgets, and releases each sandbox once', async () => {
    const { provider, requests, released } = recordingProvider()
    const env = await startRuntime({ isolation: { provider }, maxMemoryMb: 256, maxProcesses: 64, timeoutMs: 5_000, maxTimeoutMs: 9_000, idleMs: 60_000, maxOldGenerationSizeMb: 128, poolSize: 1 })
    try {
      expect(env.runtime.isolation).toBe('recorded')
      expect((await env.run('return 6 * 7')).value).toBe(42)
      expect((await env.run('return 1 + 1')).value).toBe(2)
    } finally {
      await env.dispose()
    }
    expect(requests.length).toBeGreaterThanOrEqual(2)
    expect(requests[0]!.budgets).toEqual({ memoryMb: 256, heapMb: 128, processes: 64, timeoutMs: 5_000, maxTimeoutMs: 9_000, idleMs: 60_000 })
    expect(new Set(requests.map((request) => request.id)).size).toBe(requests.length)
    expect(released.sort()).toEqual(requests.map((request) => request.id).sort())
  })

  it('fails the start with the engine’s reason when it refuses the first sandbox', async () => {
    const provider: PtcSandboxProvider = {
      acquire: () => Promise.reject(new PtcSandboxLost('exceeded quota: sandboxes=10', { refused: true })),
    }
    await expect(startRuntime({ isolation: { provider } })).rejects.toThrow(
      'the sandbox could not be established, so the runtime did not start: the sandbox provider refused it: exceeded quota: sandboxes=10',
    )
  })

  it('fails a run as sandbox-unavailable when the engine refuses its sandbox, and serves the next', async () => {
    let refusing = false
    const { provider: local } = recordingProvider()
    const provider: PtcSandboxProvider = {
      acquire: (request) => (refusing ? Promise.reject(new PtcSandboxLost('image ptc-runtime:0.1.0 not found', { refused: true })) : local.acquire(request)),
    }
    const env = await startRuntime({ isolation: { provider }, poolSize: 0 })
    try {
      refusing = true
      const refused = await env.run('return 1')
      expect(refused.error).toEqual({ kind: 'sandbox-unavailable', message: 'the sandbox could not be established, so the program did not run: the sandbox provider refused it: image ptc-runtime:0.1.0 not found' })
      refusing = false
      expect((await env.run('return 2')).value).toBe(2)
    } finally {
      await env.dispose()
    }
  })

  it('fails the run as worker-exit naming the engine’s reason when the sandbox is lost mid-run', async () => {
    const { provider, streams, released, requests } = recordingProvider()
    const env = await startRuntime({ isolation: { provider }, poolSize: 0, timeoutMs: 20_000 })
    try {
      const signal = startSignal()
      const running = env.run('await probe.started()\nawait new Promise((resolve) => setTimeout(resolve, 60_000))', { bindings: [signal.namespace] })
      await signal.running
      ;(streams.at(-1) as Duplex).destroy(new PtcSandboxLost('the pod ptc-1 was evicted: node low on memory'))
      const result = await running
      expect(result.error?.kind).toBe('worker-exit')
      expect(result.error?.message).toContain('was lost with its sandbox (the pod ptc-1 was evicted: node low on memory)')
      expect((await env.run('return 3')).value).toBe(3)
    } finally {
      await env.dispose()
    }
    expect(released.sort()).toEqual(requests.map((request) => request.id).sort())
  })

  it('reads nothing more once the far helper said it ended: a flood of "ended … killed by" lines arms one timer', async () => {
    const { provider, streams } = recordingProvider()
    const env = await startRuntime({ isolation: { provider }, poolSize: 0, timeoutMs: 20_000 })
    try {
      const signal = startSignal()
      const running = env.run('await probe.started()\nawait new Promise((resolve) => setTimeout(resolve, 60_000))', { bindings: [signal.namespace] })
      await signal.running
      const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length
      const before = timers()
      // Each line armed a 250 ms timer of its own: a million lines held 167 000 at once.
      ;(streams.at(-1) as Duplex).push('["ended","was killed by SIGKILL",false]\n'.repeat(10_000))
      await new Promise(setImmediate)
      expect(timers() - before).toBeLessThan(5)
      const result = await running
      expect(result.error?.kind).toBe('worker-exit')
      expect(result.error?.message).toContain('was killed by SIGKILL')
    } finally {
      await env.dispose()
    }
  })

  it('a run waits for its environment\'s start no longer than its time budget or 10 s, and fails as timeout saying so', async () => {
    // A sandbox that accepts the stream and never answers held a 3 s run 120 s: two 60 s starts.
    const { provider, requests, released } = recordingProvider((n) => (n === 0 ? localStream() : impostor()))
    const env = await startRuntime({ isolation: { provider }, poolSize: 0 })
    try {
      const started = Date.now()
      const result = await env.run('return 1', { timeoutMs: 1000 })
      expect(result.error).toEqual({ kind: 'timeout', message: expect.stringMatching(/did not start: its environment was not ready after 10000 ms, the longer of its time budget of 1000 ms \(timeoutMs\) and 10 s/) })
      expect(Date.now() - started).toBeLessThan(30_000)
      expect(requests).toHaveLength(2)
    } finally {
      await env.dispose()
    }
    expect(released.sort()).toEqual(requests.map((request) => request.id).sort())
  })

  it('aborts an acquisition nobody waits for any more, and releases what it acquired anyway', async () => {
    const signals: AbortSignal[] = []
    const released: string[] = []
    let slow = false
    const { provider: local } = recordingProvider()
    const provider: PtcSandboxProvider = {
      async acquire(request) {
        if (!slow) return local.acquire(request)
        signals.push(request.signal)
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        const sandbox = await local.acquire(request)
        return { stream: sandbox.stream, release: () => (released.push(request.id), sandbox.release()) }
      },
    }
    const env = await startRuntime({ isolation: { provider }, poolSize: 0 })
    slow = true
    const pending = env.run('return 1')
    await vi.waitFor(() => expect(signals).toHaveLength(1), { timeout: 15_000 })
    await env.dispose()
    expect((await pending).error?.kind).toBe('abort')
    expect(signals).toHaveLength(1)
    expect(signals[0]!.aborted).toBe(true)
    await vi.waitFor(() => expect(released).toHaveLength(1), { timeout: 15_000 })
  })

  it('keeps no spare environment while the provider reports no capacity', async () => {
    let capacity = 0
    const { provider: local, requests } = recordingProvider()
    const provider: PtcSandboxProvider = { acquire: (request) => local.acquire(request), capacity: () => capacity }
    const env = await startRuntime({ isolation: { provider }, poolSize: 2 })
    try {
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(requests).toHaveLength(1) // the start's check, released: no room for a spare
      expect((await env.run('return 1')).value).toBe(1)
      expect((await env.run('return 2')).value).toBe(2)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(requests).toHaveLength(3) // each run's own: still no spare
      capacity = 5
      expect((await env.run('return 3')).value).toBe(3)
      await vi.waitFor(() => expect(requests.length).toBeGreaterThan(4), { timeout: 15_000 }) // the run's own and the spares after it
    } finally {
      await env.dispose()
    }
  })

  it('refuses a provider without acquire, naming the field', async () => {
    await expect(startRuntime({ isolation: { provider: {} as PtcSandboxProvider } })).rejects.toThrow('config.isolation.provider must be a sandbox provider: an object with an acquire({ id, budgets, signal }) method')
  })
})
