// attack: replaces a global the signal guard reads when it runs (Number, process, String) before signalling the hosting process; SIGWINCH is harmless if it gets through
// expect: ok
// value: ["refused", "refused", "refused"]
const kill = process.kill
const pid = process.pid
const realProcess = process
const fakes = { Number: () => 12345, process: { pid: 1, ppid: 1 }, String: () => { throw new Error('replaced String') } }
const outcomes = []
for (const name of Object.keys(fakes)) {
  const original = globalThis[name]
  globalThis[name] = fakes[name]
  try {
    kill.call(realProcess, pid, 'SIGWINCH')
    outcomes.push('allowed')
  } catch (error) {
    outcomes.push(error?.code === 'EPERM' ? 'refused' : `threw: ${error?.message}`)
  } finally {
    globalThis[name] = original
  }
}
/* completion */ outcomes
