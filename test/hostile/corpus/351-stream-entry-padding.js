// attack: a frame written on the helper's channel that closes early and runs on with 20 000 000 zeros: the stream entry forwards a frame's text unparsed, as ["channel",frame], so the host read ["channel",{…},0,0,…] and built the whole list before it found the line was no entry line, 360-470 MB of its heap and 0.9 s of its CPU per line here
// expect: protocol
// message: a stream entry line holds more than 3 elements
// hosts: stream
// formats: function-body,script
// config: {"maxOutputBytes": 67108864, "maxPendingCallBytes": 16777216, "maxOldGenerationSizeMb": 512, "maxMemoryMb": 1024}
// heap: 128
// timeout: 30000
const { writeSync } = await import('node:fs')
// The descriptor is non-blocking: a large line goes out in pieces, as the entry reads.
const writeWhole = (bytes) => {
  for (let at = 0; at < bytes.length;) {
    try {
      at += writeSync(3, bytes, at)
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error
    }
  }
}
const zeros = Buffer.from(',0'.repeat(500_000))
writeWhole(Buffer.from('{"type":"exit","message":"x"}'))
for (let i = 0; i < 40; i++) writeWhole(zeros)
writeWhole(Buffer.from('\n'))
await new Promise(() => {})
