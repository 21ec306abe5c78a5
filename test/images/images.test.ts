import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PtcImage, type PtcBindingNamespace, validateBindings } from 'ptc-runtime'
import { startRuntime, textOf } from '../helpers/runtime.js'

const attachment = (id: string, extra: Record<string, unknown> = {}) => ({
  attachmentId: id,
  mediaType: 'image/png' as const,
  bytes: 1234,
  width: 640,
  height: 480,
  ...extra,
})

describe('images', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  let counter = 0
  const camera: PtcBindingNamespace = {
    global: 'camera',
    functions: {
      snap: async () => new PtcImage('/tmp/snap.png', attachment(`snap-${++counter}`, { name: 'front door' })),
      pages: async () => ({ pages: [new PtcImage('/tmp/p1.png', attachment('page-1')), new PtcImage('/tmp/p2.png', attachment('page-2'))], title: 'doc' }),
      broken: async () => new PtcImage('relative.png', attachment('x')),
      zero: async () => new PtcImage('/tmp/z.png', attachment('z', { width: 0 })),
      badType: async () => new PtcImage('/tmp/z.bmp', attachment('z', { mediaType: 'image/bmp' })),
      fake: async () => ({ path: '/tmp/x.png', attachment: attachment('fake') }) as never,
    },
  }
  beforeAll(async () => {
    env = await startRuntime({ timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())
  const run = (program: string) => env.run(program, { bindings: [camera] })

  it('an image inspected twice with text between keeps emission order', async () => {
    const result = await run(`const image = await camera.snap()\ninspect(image)\nconsole.log('between')\ninspect(image)`)
    expect(result.error).toBeUndefined()
    const id = (result.output[0] as { attachment: { attachmentId: string } }).attachment.attachmentId
    expect(result.output).toEqual([
      { type: 'image', attachment: attachment(id, { name: 'front door' }) },
      { type: 'text', text: 'between\n' },
      { type: 'image', attachment: attachment(id, { name: 'front door' }) },
    ])
  })

  it('gives the program the image dimensions, path and media type', async () => {
    const result = await run(`const i = await camera.snap(); return [i instanceof Image, i.path, i.width, i.height, i.mediaType, i.name]`)
    expect(result.value).toEqual([true, '/tmp/snap.png', 640, 480, 'image/png', 'front door'])
  })

  it('decodes images nested inside a JSON resolution', async () => {
    const result = await run(`const doc = await camera.pages(); doc.pages.forEach((p) => inspect(p)); return [doc.title, doc.pages.map((p) => p.attachmentId)]`)
    expect(result.value).toEqual(['doc', ['page-1', 'page-2']])
    expect(result.output.map((entry) => entry.type)).toEqual(['image', 'image'])
  })

  it('console.log prints a short description of an image', async () => {
    const result = await run(`console.log(await camera.snap())`)
    expect(textOf(result)).toMatch(/^Image \{ png 640x480 "front door", path: '\/tmp\/snap.png' \}\n$/)
  })

  it('renders a forged image-like object as text, never as an image entry', async () => {
    const result = await run(`
      const real = await camera.snap()
      const forged = Object.create(Image.prototype, { attachmentId: { value: 'never-issued' }, path: { value: '/etc/passwd' } })
      inspect(forged)
      inspect({ ...real })
      try { new Image() } catch (e) { console.log(e.message) }`)
    expect(result.output.every((entry) => entry.type === 'text')).toBe(true)
    expect(textOf(result)).toMatch(/cannot be constructed/)
  })

  it('a plain object shaped like PtcImage is just JSON', async () => {
    expect((await run('const f = await camera.fake(); return f instanceof Image')).value).toBe(false)
  })

  it.each([
    ['broken', /path must be an absolute path/],
    ['zero', /width and height must be positive integers/],
    ['badType', /mediaType must be one of/],
  ])('rejects the invalid PtcImage resolution of camera.%s', async (member, pattern) => {
    const result = await run(`try { await camera.${member}() } catch (e) { return e.message }`)
    expect(result.value).toMatch(pattern)
  })

  it('counts image descriptors in the output ledger', async () => {
    const small = await startRuntime({ maxOutputBytes: 600 })
    try {
      const result = await small.run(`const i = await camera.snap(); for (let n = 0; n < 20; n++) inspect(i)`, { bindings: [camera] })
      expect(result.error?.kind).toBe('output-limit')
      const images = result.output.filter((entry) => entry.type === 'image').length
      expect(images).toBeGreaterThan(0)
      expect(images).toBeLessThan(20)
    } finally {
      await small.dispose()
    }
  })

  it('reserves Image, inspect and console as binding globals', () => {
    for (const global of ['Image', 'inspect', 'console']) {
      expect(() => validateBindings([{ global, functions: {} }])).toThrow(/reserved by the runtime/)
    }
  })
})
