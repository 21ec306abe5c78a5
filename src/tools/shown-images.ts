/**
 * Which files the images of a run are: a binding hands a program a `PtcImage` (a path and an
 * attachment), and `inspect(image)` puts only the attachment in the output. The ready tool wraps
 * a run's host functions to note the path of every image they resolve, so its host can show the
 * model the image itself. One record per run: two conversations may both call an image `img-1`.
 */
import { PtcImage } from '../seam/image.js'
import type { ImageAttachmentRef, PtcBindingNamespace, PtcRunResult } from '../seam/types.js'

/** An image the program showed (`inspect`), and the file it is. */
export interface RunCodeImage {
  /** The attachment, as in the run's output. */
  attachment: ImageAttachmentRef
  /** Absolute path of the image file, as the tool that resolved it gave it. */
  path: string
}

/** How much of a value a tool resolved is searched for images: it is the host's own value, but may be large. */
const MAX_VISITS = 10_000
const MAX_DEPTH = 64

/** The paths of the images one run's tools resolved, by attachment id. */
export class ImageRecord {
  private readonly _paths = new Map<string, string>()

  /** `bindings` whose functions note every image they resolve here. */
  watch(bindings: readonly PtcBindingNamespace[]): PtcBindingNamespace[] {
    return bindings.map((namespace) => {
      if (namespace.positional) return namespace
      const functions: PtcBindingNamespace['functions'] = {}
      for (const [member, fn] of Object.entries(namespace.functions)) {
        if (fn === undefined) continue
        functions[member] = async (args, context) => {
          const value = await fn(args, context)
          this._note(value)
          return value
        }
      }
      return { ...namespace, functions }
    })
  }

  /** The images `result` shows whose files are known, in output order. */
  shown(result: PtcRunResult): RunCodeImage[] {
    const images: RunCodeImage[] = []
    for (const entry of result.output) {
      if (entry.type !== 'image') continue
      const path = this._paths.get(entry.attachment.attachmentId)
      if (path !== undefined) images.push({ attachment: entry.attachment, path })
    }
    return images
  }

  /** Walks arrays and plain objects (data properties only: no getter runs) for `PtcImage`s. */
  private _note(value: unknown): void {
    const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }]
    for (let visits = 0; stack.length > 0 && visits < MAX_VISITS; visits++) {
      const { value: current, depth } = stack.pop()!
      if (current instanceof PtcImage) {
        this._paths.set(current.attachment.attachmentId, current.path)
        continue
      }
      if (typeof current !== 'object' || current === null || depth >= MAX_DEPTH) continue
      const prototype = Object.getPrototypeOf(current)
      if (!Array.isArray(current) && prototype !== Object.prototype && prototype !== null) continue
      for (const descriptor of Object.values(Object.getOwnPropertyDescriptors(current))) {
        if ('value' in descriptor) stack.push({ value: descriptor.value, depth: depth + 1 })
      }
    }
  }
}
