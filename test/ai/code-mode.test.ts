import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { generateText, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { PtcImage, createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { aiTool, codeModeTools } from 'ptc-runtime/ai'
import { startRuntime } from '../helpers/runtime.js'
import { tempDirectory } from '../helpers/sandbox.js'

type CallOptions = Parameters<MockLanguageModelV3['doGenerate']>[0]
type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } }
const callTool = (id: string, program: string): GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: 'run_code', input: JSON.stringify({ program }) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_use' },
  usage,
  warnings: [],
})
const answer = (text: string): GenerateResult => ({ content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'end_turn' }, usage, warnings: [] })

/** A model that writes `program` once, then answers with what it read. */
function modelWriting(program: string, seen: CallOptions[] = []) {
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options)
      return options.prompt.some((entry) => entry.role === 'tool') ? answer('Done.') : callTool('call-1', program)
    },
  })
}

const temp = tempDirectory('ptc-code-mode')
afterAll(() => temp.remove())

describe('code mode through the AI SDK', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  it('shows the model an image the program inspected as an image, and the host the whole result', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
    const file = path.join(temp.dir, 'dot.png')
    writeFileSync(file, png)
    const camera = defineToolGroup({
      global: 'camera',
      tools: { snap: { inputSchema: { type: 'object' }, run: () => new PtcImage(file, { attachmentId: 'img-1', mediaType: 'image/png', bytes: png.length, width: 1, height: 1 }) } },
    })
    const runCode = createRunCodeTool({ runtime: env.runtime, groups: [camera] })
    const seen: CallOptions[] = []
    const result = await generateText({ model: modelWriting('inspect(await camera.snap({}))', seen), tools: { run_code: aiTool(runCode) }, stopWhen: stepCountIs(3), prompt: 'Look.' })

    const toolMessage = seen[1]!.prompt.find((entry) => entry.role === 'tool')!
    const part = toolMessage.content[0]!
    expect(part.type === 'tool-result' && part.output).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'Output:\n[image img-1: 1x1 image/png]' },
        { type: 'image-data', data: png.toString('base64'), mediaType: 'image/png' },
      ],
    })
    const output = result.steps[0]!.staticToolResults[0]!.output
    expect(output.result.calls.map((call) => call.tool)).toEqual(['camera.snap'])
    expect(output.images.map((image) => image.path)).toEqual([file])
  })

  it('turns existing AI SDK tools into a code-mode tool set in one call', async () => {
    const tools = {
      weather: tool({
        description: 'Tomorrow in one city.',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => ({ city, highC: city === 'Oslo' ? 14 : 22 }),
      }),
    }
    const program = "const days = await Promise.all(['Oslo', 'Lima'].map((city) => tools.weather({ city })))\nreturn days.map((day) => day.highC)"
    const codeMode = await codeModeTools(env.runtime, tools)
    const result = await generateText({ model: modelWriting(program), tools: codeMode.tools, stopWhen: stepCountIs(3), prompt: 'Weather?' })
    expect(Object.keys(codeMode.tools)).toEqual(['run_code'])
    expect(codeMode.runCode.description).toContain('weather(args: {')
    expect(result.steps[0]!.staticToolResults[0]!.output.text).toBe('Result:\n[\n  14,\n  22\n]')
    expect(result.text).toBe('Done.')
  })

  it("hands maxSchemaCheckMsPerRun to the tools' group, which checks it", async () => {
    const tools = { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => city }) }
    await expect(codeModeTools(env.runtime, tools, { maxSchemaCheckMsPerRun: 0 })).rejects.toThrow('tool group "tools": maxSchemaCheckMsPerRun must be a positive integer (ms), got 0')
  })

  it('keeps held calls pending until the host decides, and gives the text to continue with', async () => {
    const sent: string[] = []
    const tools = {
      send: tool({
        description: 'Sends a mail.',
        inputSchema: z.object({ to: z.string() }),
        needsApproval: true,
        execute: async ({ to }) => (sent.push(to), 'sent'),
      }),
    }
    const codeMode = await codeModeTools(env.runtime, tools, { global: 'mail' })
    const result = await generateText({ model: modelWriting("return await mail.send({ to: 'ana' })"), tools: codeMode.tools, stopWhen: stepCountIs(3), prompt: 'Mail Ana.' })
    expect(result.steps[0]!.staticToolResults[0]!.output.text).toMatch(/^Paused: the call mail\.send\(\{"to":"ana"\}\) awaits approval by a person\./)
    expect(codeMode.pending.map((paused) => [paused.tool, paused.args])).toEqual([['mail.send', { to: 'ana' }]])
    expect(sent).toEqual([])
    const next = await codeMode.resume(codeMode.pending[0]!.id, { approve: true })
    expect(next.text).toBe('Result:\n"sent"')
    expect(sent).toEqual(['ana'])
    expect(codeMode.pending).toEqual([])
  })
})
