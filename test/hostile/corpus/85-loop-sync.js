// attack: a synchronous infinite loop
// expect: timeout
// timeout: 500
for (;;) {}
