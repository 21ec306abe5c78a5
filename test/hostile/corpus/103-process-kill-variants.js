// attack: every spelling of signalling the hosting process or its groups; each must be refused
// expect: ok
// value: 11
let calls = 0
const sneaky = { valueOf() { return calls++ === 0 ? 2147483000 : process.pid } }
const attempts = [
  () => process.kill(process.pid, 'SIGKILL'),
  () => process.kill(process.pid),
  () => process.kill(0, 'SIGTERM'),
  () => process.kill(-1, 'SIGKILL'),
  () => process.kill(-process.pid, 'SIGKILL'),
  () => process.kill(process.ppid, 'SIGTERM'),
  () => process.kill(String(process.pid), 'SIGKILL'),
  () => process.kill(` ${process.pid} `, 9),
  () => process.kill(sneaky, 'SIGKILL'),
  () => process._kill(process.pid, 9),
  () => process.kill(process.pid, 'SIGSTOP'),
]
let refused = 0
for (const attempt of attempts) {
  try { attempt() } catch { refused++ }
}
process.kill(process.pid, 0)
/* completion */ refused
