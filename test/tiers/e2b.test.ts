import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PtcBindingNamespace, PtcSandboxProvider } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'
import { running, startSignal } from '../helpers/stream.js'
import { importDocsCode, removeDocsCode } from './docs-code.js'
import { FakeE2B } from './fake-e2b.js'


interface E2BModule {
  e2bProvider(options: { Sandbox: FakeE2B['Sandbox']; template: string; lifetimeMs?: number }): PtcSandboxProvider
}

const tools: PtcBindingNamespace = { global: 'tools', functions: { echo: async (args) => args as never } }

describe('the E2B provider of docs/providers.md, against a fake of the SDK', () => {
  let docs: E2BModule
  beforeAll(async () => {
    docs = await importDocsCode<E2BModule>('docs/providers.md', 'e2b-provider.ts')
  })
  afterAll(() => removeDocsCode())

  it('runs programs with tool calls and output in E2B sandboxes, and kills each sandbox once its environment ends', async () => {
    const e2b = new FakeE2B()
    const env = await startRuntime({ isolation: { provider: docs.e2bProvider({ Sandbox: e2b.Sandbox, template: 'ptc-entry' }) }, retainState: true, timeoutMs: 20_000 })
    try {
      expect(env.runtime.isolation).toBe('e2b')
      const owner = {}
      const first = await env.run('const back = await tools.echo({ text: "grüße, 世界" })\nconsole.log(back.text)\nglobalThis.kept = back.text.length\nreturn kept', { stateOwner: owner, bindings: [tools] })
      expect(first.error).toBeUndefined()
      expect(textOf(first)).toBe('grüße, 世界\n')
      expect(first.value).toBe(9)
      expect((await env.run('return globalThis.kept + 1', { stateOwner: owner })).value).toBe(10)
      expect((await env.run('while (true) {}', { timeoutMs: 300 })).error?.kind).toBe('timeout')
    } finally {
      await env.dispose()
    }
    expect(e2b.sandboxes.length).toBeGreaterThanOrEqual(2) // the owner's, and the one the timed-out run discarded
    expect(e2b.sandboxes.every((sandbox) => sandbox.timeoutMs === 3_600_000)).toBe(true)
    expect(e2b.live()).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(e2b.sandboxes.flatMap((sandbox) => sandbox.entries).filter((entry) => running(entry.pid!))).toEqual([])
  })

  it('fails the start with E2B’s words when it creates no sandbox', async () => {
    const e2b = new FakeE2B()
    e2b.failing = '429: Rate limit exceeded, please try again later'
    await expect(startRuntime({ isolation: { provider: docs.e2bProvider({ Sandbox: e2b.Sandbox, template: 'ptc-entry' }) } })).rejects.toThrow(
      'the sandbox could not be established, so the runtime did not start: the sandbox provider refused it: E2B did not create a sandbox from ptc-entry: 429: Rate limit exceeded, please try again later',
    )
    await expect(startRuntime({ isolation: { provider: docs.e2bProvider({ Sandbox: new FakeE2B().Sandbox, template: 'ptc-missing' }) } })).rejects.toThrow(
      "refused it: E2B did not create a sandbox from ptc-missing: 404: template 'ptc-missing' not found",
    )
  })

  it('fails the run naming the sandbox E2B ended mid-run, and the next run gets a new one', async () => {
    const e2b = new FakeE2B()
    const env = await startRuntime({ isolation: { provider: docs.e2bProvider({ Sandbox: e2b.Sandbox, template: 'ptc-entry', lifetimeMs: 90_000 }) }, poolSize: 0, timeoutMs: 20_000 })
    try {
      const signal = startSignal()
      const pending = env.run('await probe.started()\nawait new Promise((resolve) => setTimeout(resolve, 60_000))', { bindings: [signal.namespace] })
      await signal.running
      const [sandbox] = e2b.live()
      sandbox!.expire()
      const result = await pending
      expect(result.error?.kind).toBe('worker-exit')
      // Whichever the provider met first: the command's end, or a reply to the program's call that found no sandbox.
      const gone = `(ended: sandbox ${sandbox!.sandboxId} was killed: its timeout of 90000 ms passed|took no input: sandbox ${sandbox!.sandboxId} not found)`
      expect(result.error?.message).toMatch(new RegExp(`^the program's helper process was lost with its sandbox \\(the E2B sandbox ${sandbox!.sandboxId} ${gone}\\) before the run completed$`))
      expect((await env.run('return 8')).value).toBe(8)
    } finally {
      await env.dispose()
    }
    expect(e2b.live()).toEqual([])
  })
})
