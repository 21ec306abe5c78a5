// attack: throws an Error whose message is 1 MiB long
// expect: output-limit
throw new Error('y'.repeat(1 << 20))
