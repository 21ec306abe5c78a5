import type { ImageAttachmentRef } from './types.js'

/**
 * An image a host binding hands to a program. The host owns the file at `path`; the program
 * receives an `Image` carrying the path and the attachment's dimensions, and `inspect(image)`
 * adds `{ type: 'image', attachment }` to the run's output.
 */
export class PtcImage {
  readonly path: string
  readonly attachment: Readonly<ImageAttachmentRef>

  constructor(path: string, attachment: ImageAttachmentRef) {
    this.path = path
    this.attachment = Object.freeze({ ...attachment })
    Object.freeze(this)
  }
}
