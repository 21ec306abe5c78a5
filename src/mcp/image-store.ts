/**
 * The image files of one MCP tool group: written for the results that carry images, kept while
 * the host may still read them (a run's result is read after the run ends), at most
 * `maxBytes` at once (past it the oldest go first), and all deleted when the group is disposed.
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PtcImage } from '../seam/image.js'
import type { ImageAttachmentRef } from '../seam/types.js'
import { imageSize } from './image-size.js'

const EXTENSIONS: Record<ImageAttachmentRef['mediaType'], string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
}

export class ImageStore {
  private _directory: Promise<string> | undefined
  /** Whether the group made `_directory`, so deletes it whole. */
  private readonly _ownsDirectory: boolean
  /** Each file written and not yet deleted, oldest first, with its bytes. */
  private readonly _files = new Map<string, number>()
  private _bytes = 0
  private _disposed = false

  constructor(
    private readonly _global: string,
    directory: string | undefined,
    /** Bytes of image files kept on disk at once. */
    readonly maxBytes: number,
  ) {
    this._ownsDirectory = directory === undefined
    if (directory !== undefined) {
      if (!path.isAbsolute(directory)) throw new TypeError(`mcpToolGroup: imageDirectory must be an absolute path, got ${JSON.stringify(directory)}`)
      this._directory = Promise.resolve(directory)
    }
  }

  get disposed(): boolean {
    return this._disposed
  }

  /** A `PtcImage` whose attachment id is the absolute path of the file written for it. */
  async save(data: string, mimeType: string | undefined): Promise<PtcImage> {
    const mediaType = mimeType as ImageAttachmentRef['mediaType']
    const extension = EXTENSIONS[mediaType]
    if (extension === undefined) throw new Error(`the tool returned an image of type ${mimeType}; programs receive PNG, JPEG, WebP and GIF only`)
    const bytes = Buffer.from(data, 'base64')
    const size = imageSize(bytes, mediaType)
    if (size === undefined) throw new Error(`the tool returned a ${mediaType} image whose size cannot be read`)
    this._directory ??= mkdtemp(path.join(tmpdir(), 'ptc-mcp-images-'))
    const file = path.join(await this._directory, `${randomUUID()}.${extension}`)
    // Counted before it is written, so calls writing at once cannot pass the bound together.
    this._files.set(file, bytes.length)
    this._bytes += bytes.length
    const written = await Promise.all([this._evict(), writeFile(file, bytes)]).then(() => true, (error: unknown) => error)
    // Deleted while it was written (the group disposed, or newer images pushed it out): nothing would delete it later.
    if (!this._files.has(file)) {
      await rm(file, { force: true })
      throw new Error(this._disposed ? disposedMessage(this._global) : `the image was deleted as it was written: newer images took the group's maxImageBytes of ${this.maxBytes}`)
    }
    if (written !== true) throw written
    return new PtcImage(file, { attachmentId: file, mediaType, bytes: bytes.length, ...size })
  }

  /** Deletes every file the group wrote (and the directory it made); later calls are refused. */
  async dispose(): Promise<void> {
    this._disposed = true
    const directory = await this._directory
    const files = [...this._files.keys()]
    this._files.clear()
    this._bytes = 0
    if (directory === undefined) return
    if (this._ownsDirectory) await rm(directory, { recursive: true, force: true })
    else await Promise.all(files.map((file) => rm(file, { force: true })))
  }

  /** Deletes the oldest files until the rest fit `maxBytes`. */
  private async _evict(): Promise<void> {
    const doomed: string[] = []
    for (const [file, bytes] of this._files) {
      if (this._bytes <= this.maxBytes) break
      this._files.delete(file)
      this._bytes -= bytes
      doomed.push(file)
    }
    await Promise.all(doomed.map((file) => rm(file, { force: true })))
  }
}

export function disposedMessage(global: string): string {
  return `mcpToolGroup ${JSON.stringify(global)} has been disposed; make a new group to call its tools`
}
