// attack: timers that re-arm themselves and burn the CPU between turns
// expect: timeout
// timeout: 500
const burn = () => { const end = Date.now() + 20; while (Date.now() < end); setTimeout(burn, 0) }
burn()
setInterval(() => {}, 0)
await new Promise(() => {})
