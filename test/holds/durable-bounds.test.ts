/**
 * What a durable pause costs the host, and what a token can do: the journal stays within its
 * budget, values of any depth are journaled, sealed and compared, a pause that cannot be sealed
 * fails its run at once, and a token resumes at most once, within its lifetime, under any of the
 * deployment's keys.
 */
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { type PtcBindingNamespace, type PtcRunResult, type WorkerPtcRuntimeOptions, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'
import { longestStall } from '../helpers/stall.js'

type Runtime = Awaited<ReturnType<typeof startRuntime>>

const KEY = 'a durable key of at least thirty-two bytes, for tests'
const OLD_KEY = 'the key this deployment signed with before it rotated'

/** `send` needs approval; `echo` returns its argument; `invocations` counts what really ran. */
function mailGroup() {
  const invocations = { echo: 0, send: 0 }
  const group = defineToolGroup({
    global: 'mail',
    tools: {
      echo: { inputSchema: {}, run: async (args) => (invocations.echo++, args ?? null) },
      send: { inputSchema: {}, needsApproval: true, run: async () => (invocations.send++, { sent: invocations.send }) },
    },
  })
  return { namespace: group.namespace, invocations }
}

const tokenOf = (result: PtcRunResult) => {
  expect(result.error).toBeUndefined()
  expect(result.paused?.token).toEqual(expect.any(String))
  return result.paused!.token!
}

/** A program that builds a value nested `depth` deep (objects), iteratively. */
const DEEP = (depth: number) => `let deep = {}; for (let i = 0; i < ${depth}; i++) deep = { a: deep }
const depthOf = (value) => { let n = 0; while (value.a) { value = value.a; n++ } return n }`

describe('durable pauses within bounds', () => {
  const config: WorkerPtcRuntimeOptions = { isolation: 'process', sandbox: 'none', timeoutMs: 10_000, durableKey: KEY }
  const withRuntime = async (body: (env: Runtime) => Promise<void>, extra: WorkerPtcRuntimeOptions = {}) => {
    const env = await startRuntime({ ...config, ...extra })
    try {
      await body(env)
    } finally {
      await env.dispose()
    }
  }

  it('a durable run whose journal outgrows maxJournalBytes fails at once, naming the limit and where it is configured; a live run of the same calls is not limited by it', async () => {
    const program = `for (let i = 0; i < 10; i++) await mail.echo({ text: 'x'.repeat(200_000) }); return 'done'`
    await withRuntime(async ({ run }) => {
      const mail = mailGroup()
      const result = await run(program, { bindings: [mail.namespace], pause: 'durable' })
      expect(result.error).toEqual({ kind: 'exception', message: expect.stringMatching(/journal .*over its budget of 1000000 bytes \(maxJournalBytes, in the runtime's configuration\)/) })
      // Each echo journals its argument and its result, about 400 KB: the third cannot be kept.
      expect(mail.invocations.echo).toBeLessThanOrEqual(3)
      const live = mailGroup()
      expect((await run(program, { bindings: [live.namespace], pause: 'live' })).value).toBe('done')
      expect(live.invocations.echo).toBe(10)
    }, { maxJournalBytes: 1_000_000 })
  })

  it('maxJournalBytes is validated, naming the field', async () => {
    await expect(startRuntime({ ...config, maxJournalBytes: 10 })).rejects.toThrow(/maxJournalBytes/)
  })

  it('a held call whose argument is nested 100 000 deep pauses durably, and its token resumes', async () => {
    await withRuntime(async ({ run, runtime }) => {
      const mail = mailGroup()
      const program = `${DEEP(100_000)}\nconst sent = await mail.send(deep)\nreturn [depthOf(deep), sent]`
      // Crossing 100 000 levels takes seconds on a loaded machine, live or durable alike.
      const first = await run(program, { bindings: [mail.namespace], pause: 'durable', timeoutMs: 20_000 })
      const second = await runtime.resume(tokenOf(first), { approve: true }, { bindings: [mail.namespace] })
      expect(second.error).toBeUndefined()
      expect(second.value).toEqual([100_000, { sent: 1 }])
    })
  }, 90_000)

  it("a call's argument both wide and deep is journaled without holding the host's event loop for long", async () => {
    const taken = defineToolGroup({ global: 'store', tools: { take: { inputSchema: {}, run: async () => 'taken' } } })
    // 1.9 million zeros (and an object after them) beside a list nested 100 000 deep, within the
    // 2 097 152 values a message may hold: JSON.stringify gives up on the depth, and the writer that
    // takes over pushed every element on a stack of its own, holding the loop 0.75 s or more for
    // three million.
    const program = `let deep = []; for (let i = 0; i < 100_000; i++) deep = [deep]
      const wide = new Array(1_900_000).fill(0)
      wide.push({})
      return await store.take({ wide, deep })`
    await withRuntime(async ({ run }) => {
      // The same run without a journal, measured beside it: what the machine's load adds to both.
      const live = await longestStall(() => run(program, { bindings: [taken.namespace], pause: 'live', timeoutMs: 60_000 }))
      const durable = await longestStall(() => run(program, { bindings: [taken.namespace], pause: 'durable', timeoutMs: 60_000 }))
      expect([live.result.value, durable.result.error, durable.result.value]).toEqual(['taken', undefined, 'taken'])
      expect(durable.stallMs - live.stallMs).toBeLessThan(400)
    }, { maxJournalBytes: 64 * 1024 * 1024 })
  }, 90_000)

  it('a genuine token whose recorded call had an argument nested 2 000 deep resumes, and the call is answered from the record', async () => {
    await withRuntime(async ({ run, runtime }) => {
      const mail = mailGroup()
      const program = `${DEEP(2000)}\nconst back = await mail.echo(deep)\nawait mail.send({})\nreturn depthOf(back)`
      const first = await run(program, { bindings: [mail.namespace], pause: 'durable' })
      const second = await runtime.resume(tokenOf(first), { approve: true }, { bindings: [mail.namespace] })
      expect(second.error).toBeUndefined()
      expect(second.value).toBe(2000)
      expect(mail.invocations).toEqual({ echo: 1, send: 1 })
    })
  })

  it('a replay whose deep argument differs diverges cleanly, showing a bounded part of each call', async () => {
    await withRuntime(async ({ run, runtime }) => {
      const mail = mailGroup()
      const vip: PtcBindingNamespace = { global: 'vip', functions: { ping: async () => 'pong' } }
      const program = `${DEEP(3000)}\nif (typeof vip !== 'undefined') deep = { b: deep }\nawait mail.echo(deep)\nawait mail.send({})\nreturn 1`
      const first = await run(program, { bindings: [mail.namespace], pause: 'durable' })
      const second = await runtime.resume(tokenOf(first), { approve: true }, { bindings: [mail.namespace, vip] })
      expect(second.error?.kind).toBe('exception')
      expect(second.error?.message).toMatch(/diverged from its recorded run at binding call #1: the recorded run called mail\.echo\(\{"a":\{"a":.*…\), the replay called mail\.echo\(\{"b":\{"a":/)
      expect(second.error!.message.length).toBeLessThan(1000)
    })
  })

  it('a pause that cannot be sealed fails its run at once with an exception naming why, and registers nothing', async () => {
    // The hold's payload alone is over the journal's budget: the token cannot be made.
    const big: PtcBindingNamespace = { global: 'big', functions: { ask: async (_args, { hold }) => (await hold({ text: 'y'.repeat(2_000_000) })) ?? null } }
    await withRuntime(async ({ run }) => {
      const started = Date.now()
      const result = await run(`await big.ask(); while (true) {}`, { bindings: [big], pause: 'durable', timeoutMs: 3000 })
      expect(result.paused).toBeUndefined()
      expect(result.error).toEqual({ kind: 'exception', message: expect.stringMatching(/^big\.ask could not be held durably: .*maxJournalBytes/) })
      expect(Date.now() - started).toBeLessThan(20_000)
    }, { maxJournalBytes: 1_000_000 })
  })
})

describe('durable tokens resume at most once, within their lifetime, under any of the keys', () => {
  const config: WorkerPtcRuntimeOptions = { isolation: 'thread', timeoutMs: 10_000, durableKey: KEY }
  const pausedToken = async (extra: WorkerPtcRuntimeOptions = {}, mail = mailGroup()) => {
    const env = await startRuntime({ ...config, ...extra })
    try {
      return tokenOf(await env.run(`await mail.send({ to: 'ana' }); return 'sent'`, { bindings: [mail.namespace], pause: 'durable' }))
    } finally {
      await env.dispose()
    }
  }

  it('the same token resumed twice runs the approved tool once: the second resume is refused', async () => {
    const mail = mailGroup()
    const token = await pausedToken({}, mail)
    const env = await startRuntime(config)
    try {
      expect((await env.runtime.resume(token, { approve: true }, { bindings: [mail.namespace] })).value).toBe('sent')
      await expect(env.runtime.resume(token, { approve: true }, { bindings: [mail.namespace] })).rejects.toThrow(/already resumed.*at most once/)
      expect(mail.invocations.send).toBe(1)
    } finally {
      await env.dispose()
    }
  })

  it('two resumes of one token at once: one runs, the other is refused', async () => {
    const mail = mailGroup()
    const token = await pausedToken({}, mail)
    const env = await startRuntime(config)
    try {
      const both = await Promise.allSettled([0, 1].map(() => env.runtime.resume(token, { approve: true }, { bindings: [mail.namespace] })))
      expect(both.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected'])
      expect(mail.invocations.send).toBe(1)
    } finally {
      await env.dispose()
    }
  })

  it('a shared store decides across runtimes: it is asked with the token id and expiry, and its refusal or failure refuses the resume', async () => {
    const claimed = new Map<string, number | null>()
    const durableStore = { claim: async (tokenId: string, expiresAt: number | null) => (claimed.has(tokenId) ? false : (claimed.set(tokenId, expiresAt), true)) }
    const mail = mailGroup()
    const token = await pausedToken({}, mail)
    const [a, b] = [await startRuntime({ ...config, durableStore }), await startRuntime({ ...config, durableStore })]
    try {
      expect((await a.runtime.resume(token, { approve: true }, { bindings: [mail.namespace] })).value).toBe('sent')
      await expect(b.runtime.resume(token, { approve: true }, { bindings: [mail.namespace] })).rejects.toThrow(/already resumed/)
      expect([...claimed.entries()]).toEqual([[expect.stringMatching(/^[0-9a-f-]{36}$/), null]])
      expect(mail.invocations.send).toBe(1)
    } finally {
      await a.dispose()
      await b.dispose()
    }
    // With a lifetime, the store is told when the token expires, so it may forget the id then.
    const lived = await startRuntime({ ...config, durableStore, durableTokenLifetimeMs: 60_000 })
    try {
      const sealedAfter = Date.now()
      const token = await pausedToken({}, mail)
      await lived.runtime.resume(token, { approve: true }, { bindings: [mail.namespace] })
      const expiresAt = [...claimed.values()].at(-1)!
      expect(expiresAt).toBeGreaterThanOrEqual(sealedAfter + 60_000)
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60_000)
      expect(mail.invocations.send).toBe(2)
    } finally {
      await lived.dispose()
    }
    const failing = await startRuntime({ ...config, durableStore: { claim: async () => { throw new Error('the store is down') } } })
    try {
      await expect(failing.runtime.resume(await pausedToken({}, mail), { approve: true }, { bindings: [mail.namespace] })).rejects.toThrow(/durableStore.*the store is down/)
      expect(mail.invocations.send).toBe(2)
    } finally {
      await failing.dispose()
    }
  })

  it('a token older than durableTokenLifetimeMs is refused, naming its age and the option; a younger one resumes', async () => {
    const mail = mailGroup()
    const stale = await pausedToken({}, mail)
    const fresh = await pausedToken({}, mail)
    const env = await startRuntime({ ...config, durableTokenLifetimeMs: 60_000 })
    const strict = await startRuntime({ ...config, durableTokenLifetimeMs: 1 })
    try {
      await new Promise((resolve) => setTimeout(resolve, 50))
      await expect(strict.runtime.resume(stale, { approve: true }, { bindings: [mail.namespace] })).rejects.toThrow(/expired: it was issued \d+ ms ago, and tokens live 1 ms \(durableTokenLifetimeMs\)/)
      expect((await env.runtime.resume(fresh, { approve: true }, { bindings: [mail.namespace] })).value).toBe('sent')
      expect(mail.invocations.send).toBe(1)
    } finally {
      await env.dispose()
      await strict.dispose()
    }
  })

  it('key rotation: tokens are signed with the first key and verified with any; a runtime without the old key refuses its tokens', async () => {
    const mail = mailGroup()
    const old = await pausedToken({ durableKey: OLD_KEY }, mail)
    const rotated = await startRuntime({ ...config, durableKey: [KEY, OLD_KEY] })
    const current = await startRuntime({ ...config, durableKey: KEY })
    try {
      await expect(current.runtime.resume(old, { approve: true }, { bindings: [mail.namespace] })).rejects.toThrow(/signature does not match/)
      expect((await rotated.runtime.resume(old, { approve: true }, { bindings: [mail.namespace] })).value).toBe('sent')
      // What the rotated runtime signs, a runtime with only the new key verifies.
      const next = tokenOf(await rotated.run(`await mail.send({}); return 'again'`, { bindings: [mail.namespace], pause: 'durable' }))
      expect((await current.runtime.resume(next, { approve: true }, { bindings: [mail.namespace] })).value).toBe('again')
    } finally {
      await rotated.dispose()
      await current.dispose()
    }
  })

  it('a token is verified before anything of it is read: a forged record with another version is refused for its signature', async () => {
    const token = await pausedToken()
    const [prefix, , payload, signature] = token.split('.')
    const env = await startRuntime(config)
    try {
      await expect(env.runtime.resume(`${prefix}.99.${payload}.${signature}`, { approve: true }, { bindings: [] })).rejects.toThrow(/signature does not match/)
    } finally {
      await env.dispose()
    }
  })

  it('a token whose record inflates past what the resuming runtime\'s maxJournalBytes allows is refused before it is claimed, naming the option', async () => {
    const mail = mailGroup()
    const env = await startRuntime({ ...config, maxJournalBytes: 4_000_000 })
    const small = await startRuntime({ ...config, maxJournalBytes: 64 * 1024 })
    try {
      // A megabyte of one letter deflates to about a kilobyte: the token is small, its record is not.
      const program = `await mail.echo({ text: 'x'.repeat(1_000_000) }); await mail.send({}); return 'sent'`
      const token = tokenOf(await env.run(program, { bindings: [mail.namespace], pause: 'durable' }))
      expect(token.length).toBeLessThan(20_000)
      await expect(small.runtime.resume(token, { approve: true }, { bindings: [mail.namespace] })).rejects.toThrow(/record inflates to more than \d+ bytes, over what this runtime's maxJournalBytes \(65536\) lets a token hold/)
      expect(mail.invocations.send).toBe(0)
      // Refused before its claim: the runtime that sealed it still resumes it.
      expect((await env.runtime.resume(token, { approve: true }, { bindings: [mail.namespace] })).value).toBe('sent')
    } finally {
      await env.dispose()
      await small.dispose()
    }
  })

  it('a decision\'s value counts against maxJournalBytes: a resume whose decision would take the token over it is refused, and the token stays unspent', async () => {
    const sent: PtcBindingNamespace = { global: 'gate', functions: { ask: async (_args, { hold }) => (await hold({ question: 'how much?' })) ?? null } }
    const env = await startRuntime({ ...config, maxJournalBytes: 200_000 })
    try {
      const token = tokenOf(await env.run(`const answer = await gate.ask(); return typeof answer === 'string' ? answer.length : answer`, { bindings: [sent], pause: 'durable' }))
      await expect(env.runtime.resume(token, { approve: true, value: 'v'.repeat(300_000) }, { bindings: [sent] })).rejects.toThrow(/with this decision holds \d+ bytes .*over this runtime's budget of 200000 bytes \(maxJournalBytes/)
      expect((await env.runtime.resume(token, { approve: true, value: 'v'.repeat(1000) }, { bindings: [sent] })).value).toBe(1000)
    } finally {
      await env.dispose()
    }
  })

  it('a token longer than any this runtime can seal is refused at once, naming the bound, before anything of it is read', async () => {
    const env = await startRuntime({ ...config, maxJournalBytes: 64 * 1024 })
    try {
      const mail = mailGroup()
      // A forged token of 400 MB once filled the durable thread's heap, failing other conversations' pauses with it.
      const forged = `ptc-durable.2.${'A'.repeat(2_000_000)}.${'B'.repeat(43)}`
      const [refused, paused] = await Promise.allSettled([
        env.runtime.resume(forged, { approve: true }, { bindings: [mail.namespace] }),
        env.run(`await mail.send({}); return 'sent'`, { bindings: [mail.namespace], pause: 'durable' }),
      ])
      expect(refused).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/refused the token: the durable token is 2000058 characters long, over the \d+ a token sealed under this runtime's maxJournalBytes \(65536\) can have/) } })
      expect(paused.status === 'fulfilled' && tokenOf(paused.value)).toEqual(expect.any(String))
    } finally {
      await env.dispose()
    }
  })

  it('many resumes of large tokens at once are opened one at a time: none fails for the durable thread\'s memory', async () => {
    const big: PtcBindingNamespace = {
      global: 'data',
      functions: {
        // Random text deflates little: the token is about as large as its record.
        fetch: async () => randomBytes(3 << 19).toString('base64'),
        send: async (_args, { hold }) => (await hold({ q: 'ok?' }), 'sent'),
      },
    }
    const env = await startRuntime({ ...config, maxJournalBytes: 8 * 1024 * 1024 })
    try {
      const token = tokenOf(await env.run(`for (let i = 0; i < 3; i++) await data.fetch({ i }); return await data.send({})`, { bindings: [big], pause: 'durable' }))
      expect(token.length).toBeGreaterThan(4_000_000)
      // Forty opens at once hold far more than the thread's heap, sized for one token: each is
      // opened, then all but the first are refused as spent.
      const outcomes = await Promise.allSettled(Array.from({ length: 40 }, () => env.runtime.resume(token, { approve: true }, { bindings: [big] })))
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').map((outcome) => outcome.value.value)).toEqual(['sent'])
      for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason.message).toMatch(/already resumed/)
    } finally {
      await env.dispose()
    }
  }, 90_000)

  it('the new options are validated, naming the field', async () => {
    await expect(startRuntime({ ...config, durableKey: [] })).rejects.toThrow(/config\.durableKey must list at least one key/)
    await expect(startRuntime({ ...config, durableKey: [KEY, 'short'] })).rejects.toThrow(/config\.durableKey\[1\] must have at least 32 bytes/)
    await expect(startRuntime({ ...config, durableStore: {} as never })).rejects.toThrow(/config\.durableStore must have a claim\(tokenId, expiresAt\) method/)
    await expect(startRuntime({ ...config, durableTokenLifetimeMs: 0 })).rejects.toThrow(/durableTokenLifetimeMs/)
  })
})
