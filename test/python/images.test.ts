/**
 * Images from Python: a tool's `PtcImage` reaches a Python program as an `Image` (nested at any
 * depth), `inspect(image)` shows it as JavaScript's does, and nothing else becomes an image.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type PtcBindingNamespace, PtcImage } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'

const SLOW = { timeout: 180_000 }

const attachment = (id: string, extra: Record<string, unknown> = {}) => ({ attachmentId: id, mediaType: 'image/png' as const, bytes: 1234, width: 640, height: 480, ...extra })

const camera: PtcBindingNamespace = {
  global: 'camera',
  functions: {
    snap: async () => new PtcImage('/tmp/snap.png', attachment('snap-1', { name: 'front door' })),
    pages: async () => ({ title: 'doc', pages: [new PtcImage('/tmp/p1.png', attachment('page-1')), new PtcImage('/tmp/p2.png', attachment('page-2'))] }),
    // A result that spells an image's fields is data, not an image.
    lookalike: async () => ({ __ptc_image__: 0, path: '/etc/passwd', width: 1, height: 1, mediaType: 'image/png' }),
  },
}

describe('images in Python programs', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  const run = (program: string) => env.run(program, { bindings: [camera], timeoutMs: 60_000 })
  beforeAll(async () => {
    env = await startRuntime({ language: 'python', isolation: 'thread', poolSize: 1 })
  }, 180_000)
  afterAll(() => env?.dispose())

  it('shows an image a tool returned with inspect, between printed text, as JavaScript does', SLOW, async () => {
    const result = await run('image = await camera.snap()\ninspect(image)\nprint("between")\ninspect(image)\nreturn [type(image).__name__, image.path, image.width, image.height, image.media_type, image.name]')
    expect(result.error).toBeUndefined()
    expect(result.output).toEqual([
      { type: 'image', attachment: attachment('snap-1', { name: 'front door' }) },
      { type: 'text', text: 'between\n' },
      { type: 'image', attachment: attachment('snap-1', { name: 'front door' }) },
    ])
    expect(result.value).toEqual(['Image', '/tmp/snap.png', 640, 480, 'image/png', 'front door'])
  })

  it('finds images nested in a JSON result, and prints any other value with inspect', SLOW, async () => {
    const result = await run('doc = await camera.pages()\nfor page in doc["pages"]:\n    inspect(page)\ninspect({"title": doc["title"]})\nreturn [page.path for page in doc["pages"]]')
    expect(result.value).toEqual(['/tmp/p1.png', '/tmp/p2.png'])
    expect(result.output.map((entry) => entry.type)).toEqual(['image', 'image', 'text'])
    expect(textOf(result)).toBe("{'title': 'doc'}\n")
  })

  it('keeps a result that spells an image’s fields a dict, and refuses to return an image as JSON', SLOW, async () => {
    const result = await run('fake = await camera.lookalike()\ninspect(type(fake).__name__)\nreturn await camera.snap()')
    expect(result.output).toEqual([{ type: 'text', text: "'dict'\n" }])
    expect(result.error?.message).toMatch(/^ValueError: the completion value is not lossless JSON: \$ is a Image/)
  })
})
