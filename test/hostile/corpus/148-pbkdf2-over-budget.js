// attack: a synchronous native call (pbkdf2Sync, about 15 s here) that no JavaScript interrupt reaches, under a 500 ms budget
// expect: timeout
// timeout: 500
// known-bug[thread]: a worker blocked in native code cannot be terminated: the thread host reports the timeout only once the call returns (issue 14, deadlines)
const crypto = await import('node:crypto')
crypto.pbkdf2Sync('password', 'salt', 11_000_000, 64, 'sha512')
