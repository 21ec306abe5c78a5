// The AI SDK adapter against AI SDK 7 (the repository's own devDependency is AI SDK 6): the
// packed package in a fresh project whose `ai` is the one in PTC_AI_SDK_7 (a directory holding
// node_modules/ai; `.ci/run` installs it). Without it the file skips, saying why.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exec, type PackedProject, packedProject } from '../helpers/packed.js'

const prefix = process.env.PTC_AI_SDK_7
const ai = prefix && path.join(prefix, 'node_modules', 'ai')
const version = ai && existsSync(path.join(ai, 'package.json')) ? (JSON.parse(readFileSync(path.join(ai, 'package.json'), 'utf8')).version as string) : undefined
if (!version) console.warn('test/ai/ai-sdk-7.test.ts skips: set PTC_AI_SDK_7 to a directory where ai@7 is installed')

// One agent loop: codeModeTools over an AI SDK tool, an image the model must see as an image,
// the host reading the calls, and a held call answered by the host.
const loop = `
import { writeFileSync } from 'node:fs'
import { generateText, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { PtcImage, createPtcRuntime } from 'ptc-runtime'
import { codeModeTools } from 'ptc-runtime/ai'

const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
const file = new URL('./dot.png', import.meta.url).pathname
writeFileSync(file, png)
const tools = {
  snap: tool({ description: 'A photo.', inputSchema: z.object({}), execute: async () => new PtcImage(file, { attachmentId: 'img-1', mediaType: 'image/png', bytes: png.length, width: 1, height: 1 }) }),
  send: tool({ description: 'Sends a mail.', inputSchema: z.object({ to: z.string() }), needsApproval: true, execute: async () => 'sent' }),
}
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }
const programs = ['inspect(await tools.snap({}))', "return await tools.send({ to: 'ana' })"]
const seen = []
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    seen.push(prompt)
    const step = prompt.filter((message) => message.role === 'tool').length
    if (step === programs.length) return { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
    return { content: [{ type: 'tool-call', toolCallId: 'call-' + step, toolName: 'run_code', input: JSON.stringify({ program: programs[step] }) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
  },
})
const { runtime, dispose } = await createPtcRuntime()
const codeMode = await codeModeTools(runtime, tools)
const { steps, text } = await generateText({ model, tools: codeMode.tools, stopWhen: stepCountIs(5), prompt: 'Look, then mail Ana.' })
// What the model received for each tool result: the SDK hands a V3 model the image as file data.
const toModel = seen.at(-1).filter((message) => message.role === 'tool').map((message) => message.content[0].output)
const resumed = await codeMode.resume(codeMode.pending[0].id, { approve: true })
console.log(JSON.stringify({
  text,
  calls: steps.flatMap((step) => step.staticToolResults.flatMap(({ output }) => output.result.calls.map((call) => call.tool + ' ' + call.outcome))),
  toModel: toModel.map((output) => output.type === 'content' ? output.value.map((part) => part.type + (part.mediaType ? ' ' + part.mediaType : '')) : output.type),
  resumed: resumed.text,
  resumedCalls: resumed.result.calls.map((call) => call.tool + ' ' + call.outcome),
}))
await dispose()
`

describe.skipIf(!version)(`the AI SDK adapter on AI SDK ${version ?? 7}`, () => {
  let project: PackedProject
  beforeAll(async () => {
    project = await packedProject({ ai: ai! })
    writeFileSync(path.join(project.dir, 'loop.mjs'), loop)
  }, 120_000)
  afterAll(() => project?.remove())

  it('runs a code-mode loop: the model sees the image, the host reads the calls and answers the hold', { timeout: 120_000 }, async () => {
    expect(version).toMatch(/^7\./)
    const { stdout, stderr } = await exec(process.execPath, ['loop.mjs'], { cwd: project.dir })
    expect(stderr).toBe('')
    expect(JSON.parse(stdout)).toEqual({
      text: 'Done.',
      calls: ['tools.snap ok'],
      toModel: [['text', 'file-data image/png'], 'text'],
      resumed: 'Result:\n"sent"',
      resumedCalls: ['tools.send ok'],
    })
  })
})
