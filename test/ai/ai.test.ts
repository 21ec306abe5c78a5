import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PtcPause, createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { aiTool } from 'ptc-runtime/ai'
import { startRuntime } from '../helpers/runtime.js'

type CallOptions = Parameters<MockLanguageModelV3['doGenerate']>[0]
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } }
const callTool = (id: string, program: string): GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: 'run_code', input: JSON.stringify({ program }) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_use' },
  usage,
  warnings: [],
})

/** The text of the newest tool result in the prompt the SDK sent the model. */
function lastToolResult(options: CallOptions): string {
  const message = options.prompt.filter((entry) => entry.role === 'tool').at(-1)
  const part = message?.content.at(-1)
  if (part?.type !== 'tool-result' || part.output.type !== 'text') throw new Error(`no text tool result in the prompt: ${JSON.stringify(message)}`)
  return part.output.value
}

const weather = defineToolGroup({
  global: 'weather',
  tools: {
    forecast: {
      description: 'Tomorrow in one city.',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      outputSchema: { type: 'object', properties: { city: { type: 'string' }, highC: { type: 'number' } }, required: ['city', 'highC'] },
      run: ({ city }) => ({ city, highC: city === 'Oslo' ? 14 : 22 }),
    },
  },
})

describe('the AI SDK adapter', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ programFormat: 'repl', retainState: true, timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  it('runs in a generateText loop, and the second program sees what the first declared', async () => {
    const runCode = createRunCodeTool({ runtime: env.runtime, groups: [weather] })
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        switch (options.prompt.filter((entry) => entry.role === 'tool').length) {
          case 0:
            return callTool('call-1', "const days = await Promise.all(['Oslo', 'Lima'].map((city) => weather.forecast({ city })))\nconsole.log(days.length, 'days')")
          case 1:
            return callTool('call-2', 'days.filter((day) => day.highC > 20).map((day) => day.city)')
          default:
            return { content: [{ type: 'text', text: `Warm tomorrow: ${JSON.parse(lastToolResult(options).replace('Result:\n', '')).join(', ')}` }], finishReason: { unified: 'stop', raw: 'end_turn' }, usage, warnings: [] }
        }
      },
    })
    const conversation = {}
    const result = await generateText({
      model,
      tools: { [runCode.name]: aiTool(runCode, { stateOwner: conversation }) },
      stopWhen: stepCountIs(5),
      prompt: 'Which cities are warm tomorrow?',
    })
    await env.runtime.release(conversation)

    expect(result.text).toBe('Warm tomorrow: Lima')
    expect(result.steps.map((step) => step.staticToolResults.map((toolResult) => toolResult.output.text))).toEqual([['Output:\n2 days'], ['Result:\n[\n  "Lima"\n]'], []])
    // The host reads the whole result beside the text: here, every call the programs made.
    expect(result.steps[0]!.staticToolResults[0]!.output.result.calls.map((call) => `${call.tool} ${call.outcome}`)).toEqual(['weather.forecast ok', 'weather.forecast ok'])
    const offered = model.doGenerateCalls[0]!.tools
    expect(offered).toEqual([
      { type: 'function', name: 'run_code', description: runCode.description, inputSchema: runCode.inputSchema, providerOptions: undefined },
    ])
    expect(runCode.description).toContain('forecast(args: {')
  })

  it('tells the model a call awaits approval and hands the hold to onPause, whose resume text continues the conversation', async () => {
    const mail = defineToolGroup({ global: 'mail', tools: { send: { inputSchema: { type: 'object' }, needsApproval: true, run: () => 'sent' } } })
    const runCode = createRunCodeTool({ runtime: env.runtime, groups: [mail] })
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        if (options.prompt.some((entry) => entry.role === 'tool')) {
          return { content: [{ type: 'text', text: 'Waiting for your approval.' }], finishReason: { unified: 'stop', raw: 'end_turn' }, usage, warnings: [] }
        }
        return callTool('call-1', "const note = 'hi'\nconst status = await mail.send({ to: 'ana' });\n[note, status]")
      },
    })
    const pauses: PtcPause[] = []
    const conversation = {}
    const result = await generateText({
      model,
      tools: { run_code: aiTool(runCode, { stateOwner: conversation, onPause: (paused) => void pauses.push(paused) }) },
      stopWhen: stepCountIs(3),
      prompt: 'Mail Ana.',
    })
    expect(result.steps[0]!.staticToolResults[0]!.output.result.paused?.tool).toBe('mail.send')
    expect(result.steps[0]!.staticToolResults[0]!.output.text).toMatch(/^Paused: the call mail\.send\(\{"to":"ana"\}\) awaits approval by a person\./)
    expect(pauses.map((paused) => paused.tool)).toEqual(['mail.send'])
    expect(await runCode.resume(pauses[0]!.id, { approve: true })).toBe('Result:\n[\n  "hi",\n  "sent"\n]')
    await env.runtime.release(conversation)
  })

  it('passes the SDK abort signal to the run', async () => {
    const ready = createRunCodeTool({ runtime: env.runtime, groups: [] })
    const answers: string[] = []
    const runCode = { ...ready, run: async (...args: Parameters<typeof ready.run>) => {
      const answer = await ready.run(...args)
      answers.push(answer.text)
      return answer
    } }
    const stop = new AbortController()
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        if (options.prompt.some((entry) => entry.role === 'tool')) {
          return { content: [{ type: 'text', text: lastToolResult(options) }], finishReason: { unified: 'stop', raw: 'end_turn' }, usage, warnings: [] }
        }
        setTimeout(() => stop.abort(new Error('the user pressed stop')), 200)
        return callTool('call-1', 'while (true) {}')
      },
    })
    const result = await generateText({ model, tools: { run_code: aiTool(runCode) }, stopWhen: stepCountIs(3), prompt: 'Loop.', abortSignal: stop.signal }).catch(
      (error: Error) => error,
    )
    expect(result).toBeInstanceOf(Error)
    // Without the signal the loop would spin until its 10 s budget ran out.
    expect(answers).toEqual(['Error (abort): the user pressed stop'])
  })
})
