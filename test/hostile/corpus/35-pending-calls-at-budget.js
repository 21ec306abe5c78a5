// attack: exactly maxPendingCalls (16) calls in flight at once is allowed
// expect: ok
// value: 120
const values = await Promise.all(Array.from({ length: 16 }, (_, i) => tools.delay(i)))
/* completion */ values.reduce((sum, value) => sum + value, 0)
