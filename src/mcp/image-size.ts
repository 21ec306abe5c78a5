/**
 * Width and height from an encoded image's header, for the attachment descriptor a `PtcImage`
 * carries. Covers the four types the runtime accepts; anything unreadable is undefined.
 */
import type { ImageAttachmentRef } from '../seam/types.js'

export function imageSize(data: Buffer, mediaType: ImageAttachmentRef['mediaType']): { width: number; height: number } | undefined {
  try {
    switch (mediaType) {
      case 'image/png':
        // Signature (8 bytes), IHDR length and type (8), then width and height, big-endian.
        return data.toString('latin1', 12, 16) === 'IHDR' ? sized(data.readUInt32BE(16), data.readUInt32BE(20)) : undefined
      case 'image/gif':
        return data.toString('latin1', 0, 3) === 'GIF' ? sized(data.readUInt16LE(6), data.readUInt16LE(8)) : undefined
      case 'image/webp':
        return webpSize(data)
      case 'image/jpeg':
        return jpegSize(data)
    }
  } catch {
    return undefined // truncated header: reads past the end throw
  }
}

function webpSize(data: Buffer) {
  if (data.toString('latin1', 0, 4) !== 'RIFF' || data.toString('latin1', 8, 12) !== 'WEBP') return undefined
  const chunk = data.toString('latin1', 12, 16)
  if (chunk === 'VP8 ') return sized(data.readUInt16LE(26) & 0x3fff, data.readUInt16LE(28) & 0x3fff)
  if (chunk === 'VP8L') {
    const bits = data.readUInt32LE(21)
    return sized((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1)
  }
  if (chunk === 'VP8X') return sized(data.readUIntLE(24, 3) + 1, data.readUIntLE(27, 3) + 1)
  return undefined
}

function jpegSize(data: Buffer) {
  if (data[0] !== 0xff || data[1] !== 0xd8) return undefined
  // Walk the segments to the first start-of-frame marker (C0–CF except C4, C8 and CC).
  for (let offset = 2; offset + 9 < data.length; ) {
    if (data[offset] !== 0xff) return undefined
    const marker = data[offset + 1]!
    if (marker === 0xff) {
      offset++ // fill byte
      continue
    }
    const length = data.readUInt16BE(offset + 2)
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return sized(data.readUInt16BE(offset + 7), data.readUInt16BE(offset + 5))
    }
    offset += 2 + length
  }
  return undefined
}

function sized(width: number, height: number) {
  return width > 0 && height > 0 ? { width, height } : undefined
}
