import { chmodSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PtcDeploymentError, PtcImage, type PtcPause, createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'
import { bwrap, tempDirectory } from '../helpers/sandbox.js'

const temp = tempDirectory('ptc-run-code-answer')
afterAll(() => temp.remove())

// A 1x1 PNG: the file the tool hands out, whose path the host gets back.
const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')
const dot = path.join(temp.dir, 'dot.png')
writeFileSync(dot, png)
const snapshot = (id: string) => new PtcImage(dot, { attachmentId: id, mediaType: 'image/png', bytes: png.length, width: 1, height: 1 })

const camera = defineToolGroup({
  global: 'camera',
  tools: {
    snap: { inputSchema: { type: 'object' }, run: () => ({ taken: [snapshot('img-1')] }) },
    approvedSnap: { inputSchema: { type: 'object' }, needsApproval: true, run: () => snapshot('img-2') },
  },
})

describe('the ready tool gives its host the whole answer', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  beforeAll(async () => {
    env = await startRuntime({ timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  it('resolves run with the text the model reads, the result with its calls, and the files of the images shown', async () => {
    const runCode = createRunCodeTool({ runtime: env.runtime, groups: [camera] })
    const answer = await runCode.run({ program: "const { taken } = await camera.snap({})\ninspect(taken[0])\nreturn taken.length" })
    expect(answer.text).toBe('Output:\n[image img-1: 1x1 image/png]\nResult:\n1')
    expect(answer.result.calls.map((call) => `${call.tool} ${call.outcome}`)).toEqual(['camera.snap ok'])
    expect(answer.result.value).toBe(1)
    expect(answer.images).toEqual([{ attachment: { attachmentId: 'img-1', mediaType: 'image/png', bytes: png.length, width: 1, height: 1 }, path: dot }])
    expect(await runCode.execute({ program: 'return 2' })).toBe('Result:\n2')
  })

  it('keeps noting images after a live hold, and gives the paused result to the host', async () => {
    const runCode = createRunCodeTool({ runtime: env.runtime, groups: [camera] })
    const pauses: PtcPause[] = []
    const paused = await runCode.run({ program: 'inspect(await camera.approvedSnap({}))' }, { onPause: (hold) => void pauses.push(hold) })
    expect(paused.result.paused?.tool).toBe('camera.approvedSnap')
    expect(paused.images).toEqual([])
    const answer = await runCode.resumeRun(pauses[0]!.id, { approve: true })
    expect(answer.images.map((image) => [image.attachment.attachmentId, image.path])).toEqual([['img-2', dot]])
  })

  it('gives each run the files its own tools resolved, when two runs name their images alike', async () => {
    const files = Object.fromEntries(['left', 'right'].map((side) => [side, path.join(temp.dir, `${side}.png`)]))
    for (const file of Object.values(files)) writeFileSync(file, png)
    const sides = defineToolGroup({
      global: 'sides',
      tools: {
        // Every image is called img-1, as two conversations' tools may well do.
        snap: {
          inputSchema: { type: 'object', properties: { side: { enum: ['left', 'right'] } }, required: ['side'] },
          run: async ({ side }: { side: 'left' | 'right' }) => {
            await new Promise((resolve) => setTimeout(resolve, 50))
            return new PtcImage(files[side]!, { attachmentId: 'img-1', mediaType: 'image/png', bytes: png.length, width: 1, height: 1 })
          },
        },
      },
    })
    const runCode = createRunCodeTool({ runtime: env.runtime, groups: [sides] })
    const answers = await Promise.all(['left', 'right'].map((side) => runCode.run({ program: `const image = await sides.snap({ side: '${side}' })\nawait new Promise((resolve) => setTimeout(resolve, 100))\ninspect(image)` })))
    expect(answers.map((answer) => answer.images.map((image) => image.path))).toEqual([[files.left], [files.right]])
  })
})

describe.skipIf(!bwrap)('a deployment failure met at run time', () => {
  it('reaches the host as a PtcDeploymentError, not the model', async () => {
    // Passes the start-up probe (which ends in --version), then dies like a mount error would.
    const flaky = path.join(temp.dir, 'dies-before-ready')
    writeFileSync(flaky, `#!/bin/sh\nfor last; do :; done\n[ "$last" = "--version" ] && exec ${bwrap} "$@"\necho "bwrap: Can't mount tmpfs on /newroot/tmp: Operation not permitted" >&2\nexit 1\n`)
    chmodSync(flaky, 0o755)
    const env = await startRuntime({ sandbox: { bwrapPath: flaky }, poolSize: 0 })
    try {
      const runCode = createRunCodeTool({ runtime: env.runtime, groups: [] })
      const failure = await runCode.execute({ program: 'return 1' }).catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(PtcDeploymentError)
      expect((failure as PtcDeploymentError).message).toMatch(/did not run: .*Can't mount tmpfs/)
      expect((failure as PtcDeploymentError).result.error?.kind).toBe('sandbox-unavailable')
    } finally {
      await env.dispose()
    }
  })
})
