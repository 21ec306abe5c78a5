// attack: doubles a string until it can no longer grow
// expect: exception
// message: Invalid string length
let text = 'x'
for (;;) text += text
