/**
 * What a program receives for an MCP tool result: `structuredContent` as it is, text as a
 * string, images as host-issued `PtcImage`s. `isError` results become rejections carrying the
 * server's own message.
 */
import { randomUUID } from 'node:crypto'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PtcImage } from '../seam/image.js'
import type { ImageAttachmentRef, PtcBindingValue } from '../seam/types.js'
import { imageSize } from './image-size.js'

/** One entry of an MCP result's `content`, in the fields this module reads. */
export interface McpContent {
  type: string
  text?: string
  data?: string
  mimeType?: string
  uri?: string
  name?: string
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string }
}

/** The declared result of a tool that has no `outputSchema`; matches `contentValue`. */
export const CONTENT_RESULT_TYPE = 'string | Array<string | Image>'

const EXTENSIONS: Record<ImageAttachmentRef['mediaType'], string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/gif': 'gif',
}

/** Writes image content to files the program can read and the host can show. */
export class ImageStore {
  private _directory: Promise<string> | undefined

  constructor(directory: string | undefined) {
    if (directory !== undefined) {
      if (!path.isAbsolute(directory)) throw new TypeError(`mcpToolGroup: imageDirectory must be an absolute path, got ${JSON.stringify(directory)}`)
      this._directory = Promise.resolve(directory)
    }
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
    await writeFile(file, bytes)
    return new PtcImage(file, { attachmentId: file, mediaType, bytes: bytes.length, ...size })
  }
}

/**
 * The value of `content`: all text → one string (parts joined by newlines); otherwise an array
 * with a string per text part and an image per image part. Parts a program cannot use (audio,
 * binary resources) become a short bracketed description.
 */
export async function contentValue(content: readonly McpContent[], images: ImageStore): Promise<PtcBindingValue> {
  const parts = await Promise.all(content.map((part) => contentPart(part, images)))
  return parts.every((part) => typeof part === 'string') ? parts.join('\n') : parts
}

async function contentPart(part: McpContent, images: ImageStore): Promise<string | PtcImage> {
  switch (part.type) {
    case 'text':
      return part.text ?? ''
    case 'image':
      return images.save(part.data ?? '', part.mimeType)
    case 'resource':
      return part.resource?.text ?? `[resource ${part.resource?.uri ?? ''}: ${part.resource?.mimeType ?? 'binary'}, not shown]`
    case 'resource_link':
      return `[resource link ${part.uri ?? ''}${part.name ? ` (${part.name})` : ''}]`
    default:
      return `[${part.type} content${part.mimeType ? ` (${part.mimeType})` : ''}, not shown]`
  }
}

/** The server's message for an `isError` result: its text parts. */
export function errorMessage(content: readonly McpContent[] | undefined, tool: string): string {
  const text = (content ?? []).filter((part) => part.type === 'text' && part.text).map((part) => part.text)
  return text.length > 0 ? text.join('\n') : `the tool ${tool} reported an error without a message`
}
