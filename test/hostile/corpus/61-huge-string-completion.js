// attack: an 1 MiB string as the completion, far over maxOutputBytes
// expect: output-limit
/* completion */ 'x'.repeat(1 << 20)
