// attack: a synchronous shell leaves a background sleeper behind and returns at once
// expect: ok
// value: "returned"
const { execSync } = await import('node:child_process')
execSync('sleep __SLEEP__ > /dev/null 2>&1 &')
/* completion */ 'returned'
