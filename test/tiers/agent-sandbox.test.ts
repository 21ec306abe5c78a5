import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace, PtcSandboxProvider } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'
import { running, startSignal } from '../helpers/stream.js'
import { importDocsCode, removeDocsCode } from './docs-code.js'
import { FakeAgentSandbox } from './fake-agent-sandbox.js'


interface AgentSandboxModule {
  agentSandboxProvider(options: { server: string; token: string; namespace: string; template: string; port: number; readyTimeoutMs?: number }): PtcSandboxProvider
}

const tools: PtcBindingNamespace = { global: 'tools', functions: { add: async (args) => (args as { a: number; b: number }).a + (args as { a: number; b: number }).b } }

describe('the Kubernetes agent-sandbox provider of docs/providers.md, against a fake API server', () => {
  let docs: AgentSandboxModule
  let cluster: FakeAgentSandbox
  const provider = (options: { template?: string; readyTimeoutMs?: number; token?: string } = {}) =>
    docs.agentSandboxProvider({
      server: cluster.url,
      token: options.token ?? cluster.token,
      namespace: cluster.namespace,
      template: options.template ?? cluster.template,
      port: cluster.port,
      ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
    })

  beforeAll(async () => {
    docs = await importDocsCode<AgentSandboxModule>('docs/providers.md', 'agent-sandbox-provider.ts')
    cluster = new FakeAgentSandbox()
    await cluster.start()
  })
  afterAll(async () => {
    await cluster.close()
    removeDocsCode()
  })

  it('runs programs with tool calls in claimed sandboxes, and deletes every claim and pod once they end', async () => {
    const env = await startRuntime({ isolation: { provider: provider() }, retainState: true, timeoutMs: 20_000 })
    try {
      expect(env.runtime.isolation).toBe('agent-sandbox')
      const owner = {}
      const first = await env.run('globalThis.kept = await tools.add({ a: 2, b: 3 })\nreturn kept', { stateOwner: owner, bindings: [tools] })
      expect(first.error).toBeUndefined()
      expect(first.value).toBe(5)
      expect((await env.run('return globalThis.kept * 2', { stateOwner: owner })).value).toBe(10)
      const timedOut = await env.run('while (true) {}', { timeoutMs: 300 })
      expect(timedOut.error?.kind).toBe('timeout')
      expect((await env.run('return 7')).value).toBe(7)
    } finally {
      await env.dispose()
    }
    expect(cluster.created.length).toBeGreaterThanOrEqual(3)
    expect([...cluster.claims.keys()]).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(cluster.pods.filter((pod) => running(pod.pid!))).toEqual([])
  })

  it('fails the start with the API server’s words when the quota refuses the claim', async () => {
    cluster.quota = 0
    try {
      await expect(startRuntime({ isolation: { provider: provider() } })).rejects.toThrow(
        /the sandbox could not be established, so the runtime did not start: the sandbox provider refused it: the SandboxClaim ptc-[\w-]+ was refused: sandboxclaims\.extensions\.agents\.x-k8s\.io "ptc-[\w-]+" is forbidden: exceeded quota: sandboxes/,
      )
    } finally {
      cluster.quota = Number.POSITIVE_INFINITY
    }
  })

  it('fails the start when a claim of an unknown template never becomes Ready, and deletes the claim', async () => {
    await expect(startRuntime({ isolation: { provider: provider({ template: 'no-such-template', readyTimeoutMs: 500 }) } })).rejects.toThrow(
      /refused it: the SandboxClaim ptc-[\w-]+ was not Ready within 500 ms: SandboxTemplate "no-such-template" not found/,
    )
    expect([...cluster.claims.keys()]).toEqual([])
  })

  it('fails the start when the API server refuses the token', async () => {
    await expect(startRuntime({ isolation: { provider: provider({ token: 'wrong' }) } })).rejects.toThrow(/was refused: Unauthorized/)
  })

  it('fails the run naming the deleted claim when the sandbox is deleted mid-run, and the next run gets a new one', async () => {
    const env = await startRuntime({ isolation: { provider: provider() }, poolSize: 0, timeoutMs: 20_000 })
    try {
      const signal = startSignal()
      const pending = env.run('await probe.started()\nawait new Promise((resolve) => setTimeout(resolve, 60_000))', { bindings: [signal.namespace] })
      await signal.running
      const [name] = [...cluster.claims.keys()]
      cluster.deleteClaim(name!)
      const result = await pending
      expect(result.error?.kind).toBe('worker-exit')
      expect(result.error?.message).toBe(`the program's helper process was lost with its sandbox (the SandboxClaim ${name} was deleted) before the run completed`)
      expect((await env.run('return 8')).value).toBe(8)
    } finally {
      await env.dispose()
    }
    expect([...cluster.claims.keys()]).toEqual([])
  })
})
