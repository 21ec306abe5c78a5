// attack: floods process.stderr.write with byte chunks, including invalid UTF-8
// expect: output-limit
const chunk = new Uint8Array([0xe2, 0x82, 0xac, 0xff, 0x0a])
for (;;) process.stderr.write(chunk, () => {})
