/**
 * What a program receives for an MCP tool result: `structuredContent` as it is, text as a
 * string, images as host-issued `PtcImage`s. `isError` results become rejections carrying the
 * server's own message.
 */
import type { PtcImage } from '../seam/image.js'
import type { PtcBindingValue } from '../seam/types.js'
import type { ImageStore } from './image-store.js'

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

/** Image parts one result may carry: each is a file on the host's disk. */
export const MAX_IMAGES_PER_RESULT = 64

/** The bytes a call may resolve, and the option that set them, for the message. */
export interface ImageBudget {
  bytes: number
  field: string
}

/**
 * The value of `content`: all text → one string (parts joined by newlines); otherwise an array
 * with a string per text part and an image per image part. Parts a program cannot use (audio,
 * binary resources) become a short bracketed description.
 */
export async function contentValue(content: readonly McpContent[], images: ImageStore, budget: ImageBudget | undefined): Promise<PtcBindingValue> {
  checkImages(content, images, budget)
  const parts = await Promise.all(content.map((part) => contentPart(part, images)))
  return parts.every((part) => typeof part === 'string') ? parts.join('\n') : parts
}

/**
 * Refuses, before any is decoded or written, more images than a result may carry, or more bytes
 * of them than the call may resolve or the group keeps on disk: a `PtcImage` counts only its
 * path and descriptor in the result's JSON, so its file's bytes are counted here, with the text
 * beside them (the result's JSON, text and all, is measured again once built), so that images
 * and text together stay within one budget. Clean base64's length gives its decoded size
 * exactly (any other is smaller).
 */
function checkImages(content: readonly McpContent[], images: ImageStore, budget: ImageBudget | undefined): void {
  const parts = content.filter((part) => part.type === 'image')
  if (parts.length > MAX_IMAGES_PER_RESULT) throw new Error(`the tool returned ${parts.length} images in one result; a result may carry at most ${MAX_IMAGES_PER_RESULT}`)
  const bytes = parts.reduce((sum, part) => sum + Buffer.byteLength(part.data ?? '', 'base64'), 0)
  if (budget !== undefined && parts.length > 0) {
    const text = content.reduce((sum, part) => sum + (part.type === 'image' ? 0 : Buffer.byteLength(textOf(part))), 0)
    const returned = text > 0 ? `${bytes} bytes of images and ${text} bytes of text` : `${bytes} bytes of images`
    if (bytes + text > budget.bytes) throw new Error(`the tool returned ${returned}, over the call's budget of ${budget.bytes} (${budget.field})`)
  }
  if (bytes > images.maxBytes) throw new Error(`the tool returned ${bytes} bytes of images, over the group's maxImageBytes of ${images.maxBytes}`)
}

async function contentPart(part: McpContent, images: ImageStore): Promise<string | PtcImage> {
  return part.type === 'image' ? images.save(part.data ?? '', part.mimeType) : textOf(part)
}

/** What the program receives for a part that is not an image. */
function textOf(part: McpContent): string {
  switch (part.type) {
    case 'text':
      return part.text ?? ''
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
