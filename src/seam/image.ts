import type { ImageAttachmentRef } from './types.js'

/**
 * An image a host binding hands to a program. The host owns the file at `path`; the program
 * receives an `Image` carrying the path and the attachment's dimensions, and `inspect(image)`
 * adds `{ type: 'image', attachment }` to the run's output.
 */
export class PtcImage {
  /** Absolute path of the image file; the program can read it. */
  readonly path: string
  /** What `inspect(image)` adds to the output; frozen. */
  readonly attachment: Readonly<ImageAttachmentRef>

  constructor(path: string, attachment: ImageAttachmentRef) {
    this.path = path
    this.attachment = Object.freeze({ ...attachment })
    Object.freeze(this)
  }
}
