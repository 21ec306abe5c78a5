import { describe, expect, it } from 'vitest'
import { type PtcPause, type PtcRunResult, type WorkerPtcRuntimeOptions, createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'

type Runtime = Awaited<ReturnType<typeof startRuntime>>

const KEY = 'a durable key of at least thirty-two bytes, for tests'

/** A mail group whose `send` needs approval; `invocations` counts what each tool really ran. */
function mailGroup() {
  const sent: unknown[] = []
  const invocations = { lookup: 0, send: 0 }
  const group = defineToolGroup({
    global: 'mail',
    errorClass: { name: 'MailError', memberNameProperty: 'tool' },
    tools: {
      lookup: { inputSchema: { type: 'object' }, run: async (args: { name: string }) => (invocations.lookup++, { address: `${args.name}@example.com`, at: invocations.lookup }) },
      send: { inputSchema: { type: 'object' }, needsApproval: true, run: async (args) => (invocations.send++, sent.push(args), { sent: sent.length }) },
    },
  })
  return { namespace: group.namespace, sent, invocations }
}

const paused = (result: PtcRunResult) => {
  expect(result.error).toBeUndefined()
  expect(result.paused).toBeDefined()
  return result.paused!
}

/** Reads the clocks and randomness, looks an address up, sends (held), and reports it all. */
const PROGRAM = `
const started = Date.now()
const date = new Date().getTime()
const dice = [Math.random(), Math.random()]
const bytes = Array.from(crypto.getRandomValues(new Uint8Array(8)))
const { address } = await mail.lookup({ name: 'ana' })
console.log('before the send')
const receipt = await mail.send({ to: address, dice: dice[0] })
console.log('after the send')
return { started, date, dice, bytes, address, receipt, later: Math.random() < 1 }`

describe.each(['thread', 'process'] as const)('durable resume (isolation: %s)', (isolation) => {
  const config: WorkerPtcRuntimeOptions = { isolation, timeoutMs: 10_000, durableKey: KEY }
  const withRuntime = async (body: (env: Runtime) => Promise<void>, extra: WorkerPtcRuntimeOptions = {}) => {
    const env = await startRuntime({ ...config, ...extra })
    try {
      await body(env)
    } finally {
      await env.dispose()
    }
  }

  it('pauses with a token, and a new runtime with the same key resumes it as an uninterrupted run would end, without running earlier calls again', async () => {
    const mail = mailGroup()
    let first!: PtcRunResult
    await withRuntime(async ({ run }) => {
      first = await run(PROGRAM, { bindings: [mail.namespace], pause: 'durable' })
    })
    const { token, id, tool, args } = paused(first)
    expect(typeof token).toBe('string')
    expect(id).toBe(token)
    expect(tool).toBe('mail.send')
    expect(args).toEqual({ to: 'ana@example.com', dice: expect.any(Number) })
    expect(first.output).toEqual([{ type: 'text', text: 'before the send\n' }])
    expect(mail.invocations).toEqual({ lookup: 1, send: 0 })
    let second!: PtcRunResult
    await withRuntime(async ({ runtime }) => {
      second = await runtime.resume(token!, { approve: true }, { bindings: [mail.namespace] })
    })
    expect(second.error).toBeUndefined()
    expect(second.output).toEqual([{ type: 'text', text: 'after the send\n' }])
    const value = second.value as { started: number; date: number; dice: number[]; bytes: number[]; address: string; receipt: unknown }
    expect(value).toMatchObject({ address: 'ana@example.com', receipt: { sent: 1 }, later: true })
    // The values the first run drew are the values the replay read.
    expect(value.dice[0]).toBe((args as { dice: number }).dice)
    expect(value.bytes).toHaveLength(8)
    expect(value.date).toBeGreaterThanOrEqual(value.started)
    expect(mail.invocations).toEqual({ lookup: 1, send: 1 })
    expect(second.calls.map((call) => `${call.tool} ${call.outcome}`)).toEqual(['mail.lookup ok', 'mail.send ok'])

    // The same program, approved live, ends the same way (the values drawn aside).
    const live = mailGroup()
    await withRuntime(async ({ run, runtime }) => {
      const held = await run(PROGRAM, { bindings: [live.namespace] })
      const ended = await runtime.resume(paused(held).id, { approve: true })
      expect(Object.keys(ended.value as object)).toEqual(Object.keys(value))
      expect(ended.value).toMatchObject({ address: value.address, receipt: value.receipt })
    })
  })

  it('replays the recorded clock and random values in order, identical to the first run', async () => {
    const mail = mailGroup()
    const program = `const a = [Date.now(), Math.random(), Array.from(crypto.getRandomValues(new Uint8Array(4))), String(new Date().getTime())]
console.log(JSON.stringify(a))
await mail.send({ n: 1 })
return a`
    await withRuntime(async ({ run, runtime }) => {
      const first = await run(program, { bindings: [mail.namespace], pause: 'durable' })
      const printed = JSON.parse((first.output[0] as { text: string }).text)
      const second = await runtime.resume(paused(first).token!, { approve: true }, { bindings: [mail.namespace] })
      expect(second.value).toEqual(printed)
      expect(second.output).toEqual([]) // the replay's print is not reported again
    })
  })

  it("a refused call rejects in the resumed program with the group's error class and the reason", async () => {
    const mail = mailGroup()
    await withRuntime(async ({ run, runtime }) => {
      const first = await run(`const n = 41; try { await mail.send({ to: 'all' }) } catch (error) { return [n + 1, error instanceof MailError, error.tool, error.message] }`, { bindings: [mail.namespace], pause: 'durable' })
      const second = await runtime.resume(paused(first).token!, { approve: false, reason: 'not to everyone' }, { bindings: [mail.namespace] })
      expect(second.value).toEqual([42, true, 'send', 'not to everyone'])
      expect(mail.sent).toEqual([])
    })
  })

  it('pauses durably again, with a longer record, and each resume runs only the new calls', async () => {
    const mail = mailGroup()
    await withRuntime(async ({ run, runtime }) => {
      const first = await run(`const a = await mail.send({ n: 1 }); const b = await mail.lookup({ name: 'bo' }); const c = await mail.send({ n: 2 }); return [a, b, c]`, { bindings: [mail.namespace], pause: 'durable' })
      const second = await runtime.resume(paused(first).token!, { approve: true }, { bindings: [mail.namespace] })
      expect(paused(second).args).toEqual({ n: 2 })
      expect(second.paused!.token!.length).toBeGreaterThan(first.paused!.token!.length)
      const third = await runtime.resume(second.paused!.token!, { approve: true }, { bindings: [mail.namespace] })
      expect(third.value).toEqual([{ sent: 1 }, { address: 'bo@example.com', at: 1 }, { sent: 2 }])
      expect(mail.invocations).toEqual({ lookup: 1, send: 2 })
    })
  })

  it('a replay that calls a tool with other arguments fails with an exception naming the call, its number, and both versions', async () => {
    await withRuntime(async ({ run, runtime }) => {
      const mail = mailGroup()
      // The arguments depend on which bindings the run has: the resume passes one more.
      const vip = { global: 'vip', functions: { ping: async () => 'pong' } }
      const program = `await mail.lookup({ name: 'bo' }); await mail.lookup({ name: typeof vip === 'undefined' ? 'ana' : 'eve' }); await mail.send({}); return 'sent'`
      const first = await run(program, { bindings: [mail.namespace], pause: 'durable' })
      const second = await runtime.resume(paused(first).token!, { approve: true }, { bindings: [mail.namespace, vip] })
      expect(second.error?.kind).toBe('exception')
      expect(second.error?.message).toMatch(/diverged from its recorded run at binding call #2: the recorded run called mail\.lookup\(\{"name":"ana"\}\), the replay called mail\.lookup\(\{"name":"eve"\}\)/)
      expect(mail.invocations).toEqual({ lookup: 2, send: 0 })
    })
  })

  it('a replay whose program draws its arguments from randomness it does not replay diverges cleanly', async () => {
    await withRuntime(async ({ run, runtime }) => {
      const mail = mailGroup()
      // performance.now is not recorded: its value differs on the replay.
      const program = `await mail.lookup({ name: String(performance.now()) }); await mail.send({}); return 'sent'`
      const first = await run(program, { bindings: [mail.namespace], pause: 'durable' })
      const second = await runtime.resume(paused(first).token!, { approve: true }, { bindings: [mail.namespace] })
      expect(second.error).toEqual({ kind: 'exception', message: expect.stringMatching(/at binding call #1: the recorded run called mail\.lookup/) })
      expect(mail.sent).toEqual([])
    })
  })

  it('a replay that completes before reaching the held call fails with an exception naming it', async () => {
    const mail = mailGroup()
    const vip = { global: 'vip', functions: { ping: async () => 'pong' } }
    await withRuntime(async ({ run, runtime }) => {
      const first = await run(`if (typeof vip !== 'undefined') return 'early'; await mail.send({}); return 'sent'`, { bindings: [mail.namespace], pause: 'durable' })
      const second = await runtime.resume(paused(first).token!, { approve: true }, { bindings: [mail.namespace, vip] })
      expect(second.error).toEqual({ kind: 'exception', message: expect.stringMatching(/completed without making binding call #1 \(mail\.send\)/) })
    })
  })

  it('a run that drew as many values as a token records, reported at once, pauses and replays every one', async () => {
    const mail = mailGroup()
    await withRuntime(async ({ run, runtime }) => {
      // 10 000 values (MAX_DRAWS), all in the random list of the report sent before the held call.
      const program = `const dice = Array.from({ length: 10_000 }, () => Math.random())
await mail.send({ first: dice[0], last: dice[9_999] })
return [dice.length, dice[0], dice[9_999]]`
      const first = await run(program, { bindings: [mail.namespace], pause: 'durable' })
      const { first: die, last } = paused(first).args as { first: number; last: number }
      const second = await runtime.resume(first.paused!.token!, { approve: true }, { bindings: [mail.namespace] })
      expect(second.value).toEqual([10_000, die, last])
    })
  })

  it('a run that drew more values than a token records cannot pause durably: it fails naming the limit', async () => {
    const mail = mailGroup()
    await withRuntime(async ({ run }) => {
      const result = await run(`for (let i = 0; i < 10_001; i++) Math.random(); await mail.send({})`, { bindings: [mail.namespace], pause: 'durable' })
      expect(result.error).toEqual({ kind: 'exception', message: expect.stringMatching(/^mail\.send could not be held durably: .*at most 10000 values/) })
      expect(result.paused).toBeUndefined()
    })
  })

  it('refuses a forged, altered, truncated or foreign token, and runs nothing', async () => {
    const mail = mailGroup()
    await withRuntime(async ({ run, runtime }) => {
      const first = await run(`await mail.send({ to: 'bob' }); return 'sent'`, { bindings: [mail.namespace], pause: 'durable' })
      const token = paused(first).token!
      const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1)
      const options = { bindings: [mail.namespace] }
      const payloadAt = token.indexOf('.', 'ptc-durable.'.length) + 5
      await expect(runtime.resume(flip(token, payloadAt), { approve: true }, options)).rejects.toThrow(/signature does not match/)
      await expect(runtime.resume(flip(token, token.length - 3), { approve: true }, options)).rejects.toThrow(/signature does not match/)
      await expect(runtime.resume(token.slice(0, -10), { approve: true }, options)).rejects.toThrow(/signature does not match/)
      await expect(runtime.resume(token.slice(0, token.lastIndexOf('.')), { approve: true }, options)).rejects.toThrow(/malformed/)
      await expect(runtime.resume(token, { approve: true })).rejects.toThrow(/needs options\.bindings/)
      await expect(runtime.resume(token, { approve: 'yes' } as never, options)).rejects.toThrow(/decision\.approve/)
      expect(mail.invocations.send).toBe(0)
    })
    await withRuntime(async ({ runtime }) => {
      const first = await (async () => {
        const other = await startRuntime({ ...config, durableKey: Buffer.alloc(32, 7) })
        try {
          return await other.run(`await mail.send({}); return 'sent'`, { bindings: [mail.namespace], pause: 'durable' })
        } finally {
          await other.dispose()
        }
      })()
      await expect(runtime.resume(paused(first).token!, { approve: true }, { bindings: [mail.namespace] })).rejects.toThrow(/signed with another durableKey/)
      expect(mail.invocations.send).toBe(0)
    })
    await withRuntime(async ({ runtime }) => {
      await expect(runtime.resume('ptc-durable.1.x.y', { approve: true }, { bindings: [] })).rejects.toThrow(/config\.durableKey is not set/)
    }, { durableKey: undefined })
  })

  it('a program that redefines Date.now or Math.random before the recorded calls only fools itself: the replay stays exact', async () => {
    const mail = mailGroup()
    await withRuntime(async ({ run, runtime }) => {
      const program = `const before = Date.now(); Date.now = () => 1; Math.random = () => 0.5
const fake = [Date.now(), Math.random()]
const { at } = await mail.lookup({ name: 'x' })
await mail.send({})
return [before, fake, at]`
      const first = await run(program, { bindings: [mail.namespace], pause: 'durable' })
      const second = await runtime.resume(paused(first).token!, { approve: true }, { bindings: [mail.namespace] })
      expect(second.value).toEqual([expect.any(Number), [1, 0.5], 1])
    })
  })

  it('misuse is refused with errors naming the field', async () => {
    await expect(startRuntime({ isolation, pause: 'durable' })).rejects.toThrow(/config\.pause 'durable' needs config\.durableKey/)
    await expect(startRuntime({ isolation, durableKey: 'short' })).rejects.toThrow(/config\.durableKey must have at least 32 bytes/)
    await withRuntime(async ({ run, runtime }) => {
      expect(() => runtime.resolve({ program: '', bindings: [], pause: 'later' as never })).toThrow(/pause must be 'live' or 'durable'/)
      await expect(run('return 1', { pause: 'durable', stateOwner: {} })).rejects.toThrow(/cannot take a run with a stateOwner/)
      await expect(runtime.resume('hold-1-x', { approve: true }, { bindings: [] })).rejects.toThrow(/only with a durable token/)
    }, { retainState: true })
    await withRuntime(async ({ run }) => {
      await expect(run('return 1', { pause: 'durable' })).rejects.toThrow(/needs config\.durableKey/)
    }, { durableKey: undefined })
  })

  it("config pause: 'durable' makes one-shot runs durable; a request's pause: 'live' keeps its run live", async () => {
    const mail = mailGroup()
    await withRuntime(async ({ run }) => {
      expect(paused(await run(`await mail.send({})`, { bindings: [mail.namespace] })).token).toEqual(expect.any(String))
      expect(paused(await run(`await mail.send({})`, { bindings: [mail.namespace], pause: 'live' })).token).toBeUndefined()
    }, { pause: 'durable' })
  })

  it('the ready tool resumes a durable token with its own bindings', async () => {
    const mail = mailGroup()
    const group = defineToolGroup({ global: 'mail', tools: { send: { inputSchema: { type: 'object' }, needsApproval: true, run: async () => 'sent' } } })
    await withRuntime(async ({ runtime }) => {
      const runCode = createRunCodeTool({ runtime, groups: [group] })
      const pauses: PtcPause[] = []
      const text = await runCode.execute({ program: `const note = 'hi'; return [note, await mail.send({ to: 'ana' })]` }, { onPause: (held) => void pauses.push(held) })
      expect(text).toMatch(/^Paused: the call mail\.send/)
      expect(pauses[0]!.token).toEqual(expect.any(String))
      expect(await runCode.resume(pauses[0]!.token!, { approve: true })).toBe('Result:\n[\n  "hi",\n  "sent"\n]')
    }, { pause: 'durable' })
    expect(mail.invocations.send).toBe(0)
  })
})
