// attack: an infinite loop in a finally block after an infinite loop in its try block
// expect: timeout
// timeout: 500
try { for (;;) {} } finally { for (;;) {} }
