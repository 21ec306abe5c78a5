import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PtcJsonValue, type PtcPause, createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'
import { typecheck } from '../helpers/typecheck.js'

const weather = defineToolGroup({
  global: 'weather',
  description: 'Forecasts.',
  errorClass: { name: 'WeatherError', memberNameProperty: 'tool' },
  tools: {
    forecast: {
      description: 'Tomorrow in one city.',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      outputSchema: { type: 'object', properties: { city: { type: 'string' }, highC: { type: 'number' } }, required: ['city', 'highC'] },
      run: ({ city }) => {
        if (city === 'Atlantis') throw new Error('no forecast for Atlantis')
        return { city, highC: city === 'Oslo' ? 14 : 22 }
      },
    },
  },
})

describe('the ready run_code tool', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ programFormat: 'repl', retainState: true, timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  it('describes itself with the runtime instructions, the result budget and declarations that compile', () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], maxOutputChars: 500, maxValueChars: 300 })
    expect(tool.name).toBe('run_code')
    expect(tool.inputSchema).toEqual({
      type: 'object',
      properties: { program: { type: 'string', description: 'The program (repl format).' } },
      required: ['program'],
      additionalProperties: false,
    })
    expect(tool.description).toContain(env.runtime.executionInstructions)
    expect(tool.description).toContain('beyond 500 characters its middle is cut')
    expect(tool.description).toContain('cut after 300 characters')
    const declarations = /```ts\n([\s\S]*)\n```$/.exec(tool.description)![1]!
    expect(declarations).toContain(weather.declarations)
    const result = typecheck(declarations, [`const day = await weather.forecast({ city: 'Oslo' })\ninspect(day.highC)`])
    expect(result).toEqual({ declarations: [], samples: [[]] })
  })

  it('passes a failed tool call to onToolError as well as to the model', async () => {
    const reports: unknown[] = []
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], onToolError: (report) => reports.push(report) })
    const text = await tool.execute({ program: "await weather.forecast({ city: 'Atlantis' })" })
    expect(text).toMatch(/WeatherError: no forecast for Atlantis/)
    expect(reports).toEqual([
      { binding: 'weather.forecast', kind: 'threw', message: 'no forecast for Atlantis', cause: expect.any(Error) },
    ])
  })

  it('answers with the output, then the value, and keeps state for the same owner', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather] })
    const conversation = {}
    const first = await tool.execute(
      { program: "const days = await Promise.all(['Oslo', 'Lima'].map((city) => weather.forecast({ city })))\nfor (const d of days) console.log(d.city, d.highC)\ndays.length" },
      { stateOwner: conversation },
    )
    expect(first).toBe('Output:\nOslo 14\nLima 22\nResult:\n2')
    const second = await tool.execute({ program: 'days.filter((d) => d.highC > 20).map((d) => d.city)' }, { stateOwner: conversation })
    expect(second).toBe('Result:\n[\n  "Lima"\n]')
    const stranger = await tool.execute({ program: 'typeof days' }, { stateOwner: {} })
    expect(stranger).toBe('Result:\n"undefined"')
    await env.runtime.release(conversation)
  })

  it('answers with the failure and its kind, after what was printed', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather] })
    expect(await tool.execute({ program: "console.log('before')\nawait weather.forecast({ city: 'Atlantis' })" })).toBe(
      'Output:\nbefore\nError (exception): WeatherError: no forecast for Atlantis\n    at program:2:1',
    )
    expect(await tool.execute({ program: 'let x = 1' })).toBe('The program finished without output or result.')
  })

  it('cuts long output in the middle and long values at the end, and says so', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [], maxOutputChars: 100, maxValueChars: 40 })
    const text = await tool.execute({ program: "for (let i = 0; i < 100; i++) console.log('row', i)\n'x'.repeat(100)" })
    const [output, result] = text.split('\nResult:\n')
    expect(output).toMatch(/^Output:\nrow 0\nrow 1\n(row \d+\n)*\[… \d+ characters of output omitted …\]\n(row \d+\n)*row 99$/)
    expect(output!.length).toBeLessThan(100 + 60)
    expect(result).toBe(`"${'x'.repeat(39)}\n[… result cut at 40 characters; return less or summarise …]`)
  })

  it('cuts a value whose indented text would be longer than any string, rather than failing', async () => {
    // 30 copies of 3 000 nested arrays: 180 KB of JSON, over 2^29 characters indented.
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [] })
    const text = await tool.execute({ program: 'let deep = []\nfor (let i = 0; i < 3000; i++) deep = [deep]\nArray.from({ length: 30 }, () => deep)' })
    expect(text).toMatch(/^Result:\n\[\n {2}\[\n {4}\[\n[ [\n]*\n\[… result cut at 10000 characters; return less or summarise …\]$/)
  })

  it('stops the run when the signal aborts', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [] })
    const stop = new AbortController()
    setTimeout(() => stop.abort(new Error('the user pressed stop')), 100)
    expect(await tool.execute({ program: 'while (true) {}' }, { signal: stop.signal })).toBe('Error (abort): the user pressed stop')
  })

  it('says a call awaits approval, and resume answers with how the program went on', async () => {
    const mail = defineToolGroup({
      global: 'mail',
      tools: {
        send: { inputSchema: { type: 'object' }, needsApproval: true, run: () => 'sent' },
        ask: { inputSchema: {}, run: async (_, call) => (await call.interrupt({ question: 'Which folder?' })) ?? null },
      },
    })
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [mail] })
    const pauses: PtcPause[] = []
    const onPause = (paused: PtcPause) => void pauses.push(paused)
    const first = await tool.execute({ program: "console.log('drafted')\nconst status = await mail.send({ to: 'ana' })\nconst folder = await mail.ask();\n[status, folder]" }, { onPause })
    expect(first).toBe(
      'Output:\ndrafted\nPaused: the call mail.send({"to":"ana"}) awaits approval by a person. ' +
        'The program is waiting with its variables intact; you will read how it goes on once this is decided.',
    )
    const second = await tool.resume(pauses[0]!.id, { approve: true }, { onPause })
    expect(second).toMatch(/^Paused: the call mail.ask\(\) awaits a decision on \{"question":"Which folder\?"\}\. /)
    expect(await tool.resume(pauses[1]!.id, { approve: true, value: 'Inbox' })).toBe('Result:\n[\n  "sent",\n  "Inbox"\n]')
  })

  it('says a call awaits a decision however deep its argument and request nest, and the hold is answered', async () => {
    // 200 000 levels: JSON.stringify overflows the host's stack at a few thousand.
    const mail = defineToolGroup({
      global: 'mail',
      tools: {
        send: { inputSchema: { type: 'object' }, needsApproval: true, run: () => 'sent' },
        ask: { inputSchema: {}, run: async (args, call) => (await call.interrupt(args as PtcJsonValue)) ?? null },
      },
    })
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [mail], maxValueChars: 40 })
    const pauses: PtcPause[] = []
    const onPause = (paused: PtcPause) => void pauses.push(paused)
    const program = "let deep = 0\nfor (let i = 0; i < 200000; i++) deep = [deep]\nconst refused = await mail.send({ deep }).catch((error) => error.message);\n[refused, await mail.ask(deep)]"
    const cut = (text: string, what: string) => `${text.padEnd(40, '[')}\n[… ${what} cut at 40 characters; return less or summarise …]`
    const waiting = 'The program is waiting with its variables intact; you will read how it goes on once this is decided.'
    expect(await tool.execute({ program }, { onPause })).toBe(`Paused: the call ${cut('mail.send({"deep":', 'call')} awaits approval by a person. ${waiting}`)
    const asked = await tool.resume(pauses[0]!.id, { approve: false, reason: 'too deep to read' }, { onPause })
    expect(asked).toBe(`Paused: the call ${cut('mail.ask(', 'call')} awaits ${cut('a decision on ', 'request')}. ${waiting}`)
    expect(await tool.resume(pauses[1]!.id, { approve: true, value: 'Inbox' })).toMatch(/^Result:\n\[\n {2}".*too deep to read.*",\n {2}"Inbox"\n\]$/)
  })

  it('says a durable call awaits a decision however deep its argument nests, and the token is answered', async () => {
    const durable = await startRuntime({ pause: 'durable', durableKey: 'a durable key of at least thirty-two bytes, for tests', timeoutMs: 10_000 })
    try {
      const mail = defineToolGroup({ global: 'mail', tools: { send: { inputSchema: { type: 'object' }, needsApproval: true, run: () => 'sent' } } })
      const tool = createRunCodeTool({ runtime: durable.runtime, groups: [mail], maxValueChars: 40 })
      const pauses: PtcPause[] = []
      const program = 'let deep = 0\nfor (let i = 0; i < 200000; i++) deep = [deep]\nreturn await mail.send({ deep })'
      expect(await tool.execute({ program }, { onPause: (paused) => void pauses.push(paused) })).toMatch(/^Paused: the call mail\.send\(\{"deep":\[{22}\n\[… call cut at 40 characters/)
      expect(await tool.resume(pauses[0]!.token!, { approve: true })).toBe('Result:\n"sent"')
    } finally {
      await durable.dispose()
    }
  })

  it('refuses a program that is not a string, colliding groups and bad budgets', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [] })
    await expect(tool.execute({ code: 'return 1' } as never)).rejects.toThrow('run_code: input.program must be a string, got undefined')
    expect(() => createRunCodeTool({ runtime: env.runtime, groups: [weather, weather] })).toThrow('binding global "weather" is declared twice')
    expect(() => createRunCodeTool({ runtime: env.runtime, groups: [], maxOutputChars: 0 })).toThrow('createRunCodeTool: maxOutputChars must be a positive integer, got 0')
  })

  it('tells the model that TypeScript is accepted when the runtime takes TypeScript', async () => {
    const typescript = await startRuntime({ language: 'typescript', timeoutMs: 10_000 })
    try {
      const tool = createRunCodeTool({ runtime: typescript.runtime, groups: [weather] })
      expect(tool.description).toMatch(/^Run a TypeScript program that calls the tools declared below/)
      expect(tool.description).toContain('TypeScript is accepted')
      expect(tool.inputSchema.properties.program.description).toBe('The program (function-body format, TypeScript).')
      const text = await tool.execute({ program: "const day = await weather.forecast({ city: 'Oslo' }) as { highC: number }\nreturn day.highC" })
      expect(text).toBe('Result:\n14')
    } finally {
      await typescript.dispose()
    }
  })

  describe('with typecheck', () => {
    let typescript: Awaited<ReturnType<typeof startRuntime>>
    let forecasts = 0
    const counted = defineToolGroup({
      global: 'weather',
      tools: {
        forecast: {
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          outputSchema: { type: 'object', properties: { highC: { type: 'number' } }, required: ['highC'] },
          run: () => {
            forecasts++
            return { highC: 14 }
          },
        },
      },
    })
    beforeAll(async () => {
      typescript = await startRuntime({ language: 'typescript', timeoutMs: 10_000 })
    })
    afterAll(() => typescript.dispose())

    it('does not run a program whose tool call does not type-check, and says where', async () => {
      const tool = createRunCodeTool({ runtime: typescript.runtime, groups: [counted], typecheck: true })
      expect(tool.description).toContain('Each program is type-checked against these declarations before it runs')
      forecasts = 0
      const text = await tool.execute({ program: "const first = await weather.forecast({ city: 'Oslo' })\nconst day = await weather.forecast({ town: 'Oslo' })\nreturn day.highC" })
      expect(text).toMatch(/^Error \(exception\): The program does not type-check against the declared tools; nothing ran\.\nTS2353: Object literal may only specify known properties, and 'town' does not exist in type '\{ city: string; \}'\. \(line 2, column 38\)$/)
      expect(forecasts).toBe(0)
      await tool.close()
    })

    it('runs a program that type-checks, fenced, with Node globals left to run time', async () => {
      const tool = createRunCodeTool({ runtime: typescript.runtime, groups: [counted], typecheck: true })
      const program = "```ts\nconst day: { highC: number } = await weather.forecast({ city: 'Oslo' })\nconsole.log(process.cwd() !== '')\nreturn day.highC.toFixed(1)\n```"
      expect(await tool.execute({ program })).toBe('Output:\ntrue\nResult:\n"14.0"')
      await tool.close()
    })

    it('reports a misspelled member of a tool result at its position', async () => {
      const tool = createRunCodeTool({ runtime: typescript.runtime, groups: [counted], typecheck: true })
      const text = await tool.execute({ program: "const day = await weather.forecast({ city: 'Oslo' })\nreturn day.highF" })
      expect(text).toMatch(/TS2551: Property 'highF' does not exist on type '\{ highC: number; \}'\. Did you mean 'highC'\? \(line 2, column 12\)/)
      await tool.close()
    })
  })
})
