import { describe, expect, it } from 'vitest'
import { FrameReader } from '../../src/protocol/frames.js'

describe('the helper channel frame reader', () => {
  const frame = `${JSON.stringify({ type: 'message', message: { text: 'é'.repeat(50_000) } })}\n`
  const bytes = Buffer.from(frame.repeat(2))

  it('joins a frame sent one byte at a time, multi-byte characters included', () => {
    const reader = new FrameReader(1 << 20)
    const frames: unknown[] = []
    for (let at = 0; at < bytes.length; at++) frames.push(...reader.push(bytes.subarray(at, at + 1))!)
    expect(frames).toEqual([JSON.parse(frame), JSON.parse(frame)])
  })

  it('refuses a line past its limit while it trickles in, before it ends', () => {
    const reader = new FrameReader(1000)
    let refused = -1
    for (let at = 0; at < 5000 && refused === -1; at++) if (reader.push(Buffer.from('x')) === undefined) refused = at
    expect(refused).toBe(1000)
  })

  it('applies a limit changed between pushes to the line in progress', () => {
    const reader = new FrameReader(1 << 20)
    expect(reader.push(Buffer.from('{"type":"forged"}\n{"type":'))).toEqual([{ type: 'forged' }])
    reader.maxFrameBytes = 8
    expect(reader.push(Buffer.from('"ready"'))).toBeUndefined()
  })

  it('keeps splitting frames after a long one', () => {
    const reader = new FrameReader(1 << 20)
    expect(reader.push(bytes.subarray(0, 70_000))).toEqual([])
    expect(reader.push(Buffer.concat([bytes.subarray(70_000), Buffer.from('[1]\n[2]\n')]))).toEqual([JSON.parse(frame), JSON.parse(frame), [1], [2]])
  })
})
