// attack: a synchronous native call (pbkdf2Sync, about 3 s of CPU here) that no JavaScript interrupt reaches, under a 500 ms budget
// expect: timeout
// timeout: 500
const crypto = await import('node:crypto')
crypto.pbkdf2Sync('password', 'salt', 6_000_000, 64, 'sha512')
