import { describe, expect, it } from 'vitest'
import { type PtcBindingNamespace, type PtcRunResult, type WorkerPtcRuntimeOptions, defineToolGroup } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'

type Runtime = Awaited<ReturnType<typeof startRuntime>>

/** A mail group whose `send` needs approval; `sent` records what the tool really sent. */
function mailGroup() {
  const sent: unknown[] = []
  const group = defineToolGroup({
    global: 'mail',
    errorClass: { name: 'MailError', memberNameProperty: 'tool' },
    tools: {
      send: { inputSchema: { type: 'object' }, needsApproval: true, run: async (args) => (sent.push(args), { sent: sent.length }) },
      draft: { inputSchema: { type: 'object' }, needsApproval: (args: { to?: string }) => args.to !== 'me', run: async (args) => args },
      ask: { inputSchema: { type: 'object' }, run: async (args, call) => ({ answer: (await call.interrupt({ question: args.question })) ?? null }) },
      echo: { inputSchema: {}, run: async (args) => args },
    },
  })
  return { namespace: group.namespace, sent }
}

const paused = (result: PtcRunResult) => {
  expect(result.error).toBeUndefined()
  expect(result.paused).toBeDefined()
  return result.paused!
}

describe.each(['thread', 'process'] as const)('held calls (isolation: %s)', (isolation) => {
  const withRuntime = async (body: (env: Runtime, mail: ReturnType<typeof mailGroup>) => Promise<void>, config: WorkerPtcRuntimeOptions = {}) => {
    const env = await startRuntime({ isolation, retainState: true, timeoutMs: 10_000, ...config })
    try {
      await body(env, mailGroup())
    } finally {
      await env.dispose()
    }
  }
  const bindings = (mail: { namespace: PtcBindingNamespace }) => ({ bindings: [mail.namespace] })

  it('a program that calls an approval-gated tool pauses, is approved, and finishes with its variables intact', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const first = await run(`const before = 41; console.log('asking'); const receipt = await mail.send({ to: 'bob' }); console.log('sent'); return [before + 1, receipt]`, bindings(mail))
      expect(first.output).toEqual([{ type: 'text', text: 'asking\n' }])
      expect(paused(first)).toEqual({ id: expect.any(String), tool: 'mail.send', args: { to: 'bob' }, payload: null })
      expect(mail.sent).toEqual([]) // nothing is sent before the approval
      const second = await runtime.resume(first.paused!.id, { approve: true })
      expect(second).toMatchObject({ output: [{ type: 'text', text: 'sent\n' }], value: [42, { sent: 1 }] })
      expect(second.calls.map((call) => `${call.tool} ${call.outcome}`)).toEqual(['mail.send ok'])
      expect(first.calls).toEqual([]) // nothing had settled when the run paused
      expect(mail.sent).toEqual([{ to: 'bob' }])
    })
  })

  it("a refused call rejects in the program with the group's error class and the reason, and the program can catch it", async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const first = await run(`try { await mail.send({ to: 'all' }) } catch (error) { return [error instanceof MailError, error.tool, error.message] }`, bindings(mail))
      const second = await runtime.resume(paused(first).id, { approve: false, reason: 'not to everyone' })
      expect(second.value).toEqual([true, 'send', 'not to everyone'])
      expect(mail.sent).toEqual([])
    })
  })

  it('needsApproval as a function holds only the calls it picks', async () => {
    await withRuntime(async ({ run }, mail) => {
      expect((await run(`return await mail.draft({ to: 'me' })`, bindings(mail))).value).toEqual({ to: 'me' })
      expect(paused(await run(`return await mail.draft({ to: 'boss' })`, bindings(mail))).tool).toBe('mail.draft')
    })
  })

  it("a tool's interrupt carries its payload out and the decision's value back", async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const first = await run(`return await mail.ask({ question: 'which folder?' })`, bindings(mail))
      expect(paused(first).payload).toEqual({ question: 'which folder?' })
      expect((await runtime.resume(first.paused!.id, { approve: true, value: 'Inbox' })).value).toEqual({ answer: 'Inbox' })
    })
  })

  it('a run pauses once per held call, one after the other, and the same environment continues each time', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const first = await run(`globalThis.count = 0; const all = await Promise.all([mail.send({ n: 1 }), mail.send({ n: 2 })]); return [all, ++count]`, bindings(mail))
      expect(paused(first).args).toEqual({ n: 1 })
      const second = await runtime.resume(first.paused!.id, { approve: true })
      expect(paused(second).args).toEqual({ n: 2 })
      const third = await runtime.resume(second.paused!.id, { approve: true })
      expect(third.value).toEqual([[{ sent: 1 }, { sent: 2 }], 1])
    })
  })

  it('the deadline does not run while a call is held', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const first = await run(`await mail.send({}); return 'in time'`, { ...bindings(mail), timeoutMs: 400 })
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect((await runtime.resume(paused(first).id, { approve: true })).value).toBe('in time')
    })
  })

  it("a tool's own timeoutMs does not run while a person decides on its call, and runs again after", async () => {
    await withRuntime(async ({ run, runtime }) => {
      const group = defineToolGroup({
        global: 'pay',
        tools: {
          quick: { inputSchema: {}, timeoutMs: 200, needsApproval: true, run: async () => 'paid' },
          slow: { inputSchema: {}, timeoutMs: 200, needsApproval: true, run: () => new Promise((resolve) => setTimeout(resolve, 600, 'late')) },
        },
      })
      const first = await run(`const a = await pay.quick(); let b; try { b = await pay.slow() } catch (error) { b = error.message } return [a, b]`, { bindings: [group.namespace] })
      await new Promise((resolve) => setTimeout(resolve, 500)) // longer than the tool's budget
      const second = await runtime.resume(paused(first).id, { approve: true })
      const third = await runtime.resume(paused(second).id, { approve: true })
      expect(third.value).toEqual(['paid', 'pay.slow did not finish within its time budget of 200 ms (timeoutMs)'])
    })
  })

  it('a program that spins while its call is held times out within its budget, and the owner goes on', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const owner = {}
      const program = `void mail.send({}).catch(() => {}); await new Promise((resolve) => setTimeout(resolve, 50)); while (true) {}`
      const first = await run(program, { ...bindings(mail), stateOwner: owner, timeoutMs: 1000 })
      const started = performance.now()
      // Queued behind the held run: it starts once the spinning run has timed out.
      const next = await run('return 1', { stateOwner: owner })
      // The budget is charged with the helper's CPU time, and helpers run behind everything else.
      expect(performance.now() - started).toBeLessThan(20_000)
      expect(textOf(next)).toMatch(/ran out of time/)
      const ended = await runtime.resume(paused(first).id, { approve: true })
      expect(ended.error).toEqual({ kind: 'timeout', message: expect.stringMatching(/time budget of 1000 ms/) })
      expect(mail.sent).toEqual([])
    }, { holdTimeoutMs: 60_000 })
  })

  it('a subprocess that spins while its program waits for a held call spends the budget too', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const owner = {}
      const program = `const { spawn } = await import('node:child_process'); spawn('sh', ['-c', 'while :; do :; done']); await mail.send({})`
      const first = await run(program, { ...bindings(mail), stateOwner: owner, timeoutMs: 1000 })
      const started = performance.now()
      const next = await run('return 1', { stateOwner: owner })
      // The budget is charged with the helper's CPU time, and helpers run behind everything else.
      expect(performance.now() - started).toBeLessThan(20_000)
      expect(textOf(next)).toMatch(/ran out of time/)
      expect((await runtime.resume(paused(first).id, { approve: true })).error?.kind).toBe('timeout')
    }, { holdTimeoutMs: 60_000 })
  })

  it('a hold never answered expires after holdTimeoutMs and fails the run as a timeout naming the hold', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const owner = {}
      const first = await run(`await mail.send({}); return 'sent'`, { ...bindings(mail), stateOwner: owner })
      const next = await run('return typeof before', { stateOwner: owner })
      expect(textOf(next)).toMatch(/ran out of time/)
      const ended = await runtime.resume(paused(first).id, { approve: true })
      expect(ended.error).toEqual({ kind: 'timeout', message: 'the call mail.send was held for a decision for longer than 5000 ms (holdTimeoutMs)' })
      expect(mail.sent).toEqual([])
      // The expired result is kept holdTimeoutMs more: long enough here for the owner's next run
      // to start a fresh environment on a loaded machine (300 ms was not, 2000 ms nearly).
    }, { holdTimeoutMs: 5000 })
  })

  it('other owners and one-shot runs go on while a run is held', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const first = await run(`await mail.send({}); return 'sent'`, { ...bindings(mail), stateOwner: {} })
      expect((await run('return 2', { stateOwner: {} })).value).toBe(2)
      expect((await run('return 3')).value).toBe(3)
      expect((await runtime.resume(paused(first).id, { approve: true })).value).toBe('sent')
    })
  })

  it('release ends a held run, and resuming it answers with the abort', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const owner = {}
      const first = await run(`await mail.send({}); return 'sent'`, { ...bindings(mail), stateOwner: owner })
      await runtime.release(owner)
      expect((await runtime.resume(paused(first).id, { approve: true })).error).toEqual({ kind: 'abort', message: 'the state owner was released' })
      expect(mail.sent).toEqual([])
    })
  })

  it("a run's signal stops it until its first answer; resume's signal from then on", async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const caller = new AbortController()
      const first = await run(`await mail.send({ n: 1 }); await mail.send({ n: 2 }); return 'both'`, { ...bindings(mail), signal: caller.signal })
      caller.abort(new Error('the first request is over'))
      const resumer = new AbortController()
      const second = await runtime.resume(paused(first).id, { approve: true }, { signal: resumer.signal })
      expect(paused(second).args).toEqual({ n: 2 })
      const third = runtime.resume(second.paused!.id, { approve: true }, { signal: AbortSignal.abort(new Error('stop now')) })
      expect((await third).error).toEqual({ kind: 'abort', message: 'stop now' })
    })
  })

  it('an unknown, answered or malformed resume is refused with a clear error', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      await expect(runtime.resume('hold-0', { approve: true })).rejects.toThrow(/no call is held under the id "hold-0"/)
      const first = await run(`return await mail.send({})`, bindings(mail))
      const { id } = paused(first)
      await expect(runtime.resume(id, { approve: 'yes' } as never)).rejects.toThrow(/decision.approve must be true or false/)
      await runtime.resume(id, { approve: true })
      await expect(runtime.resume(id, { approve: true })).rejects.toThrow(/already answered/)
    })
  })

  it('each answer carries the output printed since the previous one, and the output cap counts the whole run', async () => {
    await withRuntime(async ({ run, runtime }, mail) => {
      const first = await run(`console.log('a'.repeat(60)); await mail.send({}); console.log('b'.repeat(60)); return 1`, bindings(mail))
      expect(textOf(first)).toBe(`${'a'.repeat(60)}\n`)
      const second = await runtime.resume(paused(first).id, { approve: true })
      expect(second.error?.kind).toBe('output-limit')
      expect(textOf(second)).not.toContain('a')
    }, { maxOutputBytes: 100 })
  })

  it('a raw host function holds with a payload of its choice; a payload that is not lossless JSON rejects the call', async () => {
    await withRuntime(async ({ run, runtime }) => {
      const ask: PtcBindingNamespace = {
        global: 'ask',
        functions: {
          folder: async (_, { hold }) => (await hold({ question: 'Which folder?' })) ?? null,
          broken: async (_, { hold }) => hold({ when: new Date(0) } as never).then(() => 'held'),
        },
      }
      const first = await run(`return await ask.folder()`, { bindings: [ask] })
      expect(paused(first)).toEqual({ id: expect.any(String), tool: 'ask.folder', payload: { question: 'Which folder?' } })
      expect((await runtime.resume(first.paused!.id, { approve: true, value: 'Inbox' })).value).toBe('Inbox')
      const broken = await run(`return await ask.broken().catch((error) => error.message)`, { bindings: [ask] })
      expect(broken.value).toMatch(/^ask\.broken: a hold's payload must be lossless JSON \(Date instance at \$\.when\)$/)
    })
  })

  it('disposal ends held runs, and resume afterwards is refused', async () => {
    const env = await startRuntime({ isolation })
    const mail = mailGroup()
    const first = await env.run(`return await mail.send({})`, bindings(mail))
    await env.dispose()
    await expect(env.runtime.resume(paused(first).id, { approve: true })).rejects.toThrow(/after disposal/)
    expect(mail.sent).toEqual([])
  })
})
