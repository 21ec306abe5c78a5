/**
 * The program-side `Image` class and `inspect()`. Only the runtime creates genuine images
 * (from a binding's `PtcImage` resolution); anything else that looks like an image renders as
 * text. The host also checks every emitted attachment id against the ones it issued.
 */
import { inspect as render } from 'node:util'
import { jsonByteLength } from '../json/index.js'
import type { PtcJsonValue } from '../seam/types.js'
import { TypeErrorOf, WeakSetOf, create, dataProperty, defineProperty, freeze, weakSetAdd, weakSetHas } from './intrinsics.js'

const MEDIA_TYPES: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/webp': 'webp', 'image/gif': 'gif' }
const genuine = new WeakSetOf<object>()

/** An image handed to the program by a host binding. */
export class Image {
  declare readonly path: string
  declare readonly attachmentId: string
  declare readonly mediaType: string
  declare readonly width: number
  declare readonly height: number
  declare readonly bytes: number
  declare readonly name?: string

  constructor() {
    throw new TypeErrorOf('Image instances come from tool results; they cannot be constructed')
  }

  [render.custom](): string {
    const kind = MEDIA_TYPES[this.mediaType] ?? this.mediaType
    return `Image { ${kind} ${this.width}x${this.height}${this.name ? ` "${this.name}"` : ''}, path: '${this.path}' }`
  }
}
const imagePrototype = Image.prototype

type LeafFields = Record<string, string | number>

/** Rebuilds an image from the fields the host encoded, or undefined when they are malformed. */
export function imageFromLeaf(fields: LeafFields): Image | undefined {
  const { path, attachmentId, mediaType, bytes, width, height, name } = fields
  if (typeof path !== 'string' || typeof attachmentId !== 'string' || typeof mediaType !== 'string') return undefined
  if (typeof bytes !== 'number' || typeof width !== 'number' || typeof height !== 'number') return undefined
  if (name !== undefined && typeof name !== 'string') return undefined
  const image = create(imagePrototype) as Image
  const values: Record<string, unknown> = { path, attachmentId, mediaType, width, height, bytes }
  if (name !== undefined) values.name = name
  for (const key in values) defineProperty(image, key, dataProperty(values[key], true, false, false))
  freeze(image)
  weakSetAdd(genuine, image)
  return image
}

/** Whether `value` is an image the runtime made from a binding's result (not a look-alike). */
export function isGenuine(value: unknown): value is Image {
  return typeof value === 'object' && value !== null && weakSetHas(genuine, value)
}

/** The JSON bytes of the descriptor the host will emit for this image (canonical key order). */
function descriptorBytes(image: Image): number {
  const attachment: Record<string, PtcJsonValue> = {
    attachmentId: image.attachmentId,
    mediaType: image.mediaType,
    bytes: image.bytes,
    width: image.width,
    height: image.height,
  }
  if (image.name !== undefined) attachment.name = image.name
  return jsonByteLength({ type: 'image', attachment })
}

/** Builds the program's `inspect(value)`: images become image entries, the rest rendered text. */
export function createInspect(sink: { text(text: string): void; image(id: string, bytes: number): void }) {
  return function inspect(value: unknown): void {
    if (isGenuine(value)) return sink.image(value.attachmentId, descriptorBytes(value))
    sink.text(render(value) + '\n')
  }
}
