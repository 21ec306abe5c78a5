/**
 * What the model reads of a ready-tool answer through the AI SDK: its text, then each image the
 * program showed as an image (not the bracketed line the text has for it).
 */
import { open } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { RunCodeAnswer } from '../tools/run-code-tool.js'

/**
 * AI SDK 7 takes an image in a tool result as a `file` part (its `image-data` is deprecated and
 * warns at every use); AI SDK 6 knows only `image-data`. The SDK in use is the one this module
 * resolves, as its `import 'ai'` does.
 */
const takesFileParts = Number((createRequire(import.meta.url)('ai/package.json') as { version: string }).version.split('.')[0]) >= 7

/** An image file larger than this is left as its line of text: models take a few MB at most. */
export const MAX_MODEL_IMAGE_BYTES = 20 * 2 ** 20

/** An image as the AI SDK in use takes it in a tool result: base64 data and its media type. */
export type RunCodeModelImage = { type: 'image-data'; data: string; mediaType: string } | { type: 'file'; data: { type: 'data'; data: string }; mediaType: string }

/** The AI SDK's tool result output for `answer` (the `content` form when it has images). */
export type RunCodeModelOutput = { type: 'text'; value: string } | { type: 'content'; value: Array<{ type: 'text'; text: string } | RunCodeModelImage> }

/**
 * `answer`'s text, and each of its images read from its file, at most `MAX_MODEL_IMAGE_BYTES`
 * each (the size is checked before reading). An image whose file cannot be read, or is larger,
 * stays a line of the text.
 */
export async function modelOutput(answer: RunCodeAnswer): Promise<RunCodeModelOutput> {
  const images: RunCodeModelImage[] = []
  for (const { attachment, path } of answer.images) {
    const bytes = await readBounded(path, MAX_MODEL_IMAGE_BYTES)
    if (bytes === undefined) continue
    const data = bytes.toString('base64')
    const { mediaType } = attachment
    images.push(takesFileParts ? { type: 'file', data: { type: 'data', data }, mediaType } : { type: 'image-data', data, mediaType })
  }
  if (images.length === 0) return { type: 'text', value: answer.text }
  return { type: 'content', value: [{ type: 'text', text: answer.text }, ...images] }
}

/** The file's bytes, or `undefined` when it cannot be read or holds more than `max`. */
async function readBounded(path: string, max: number): Promise<Buffer | undefined> {
  let file
  try {
    file = await open(path, 'r')
    const { size } = await file.stat()
    if (size > max) return undefined
    // One byte more than the stat said tells a file that grew since.
    const buffer = Buffer.alloc(size + 1)
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0)
    return bytesRead > size ? undefined : buffer.subarray(0, bytesRead)
  } catch {
    return undefined
  } finally {
    await file?.close()
  }
}
