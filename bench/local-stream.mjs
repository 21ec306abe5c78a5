/**
 * The stream entry as a local process: what the stream tier costs without any sandbox in the
 * way. Shared by the benches that measure that tier (tiers, frames).
 */
import { spawn } from 'node:child_process'
import { Duplex } from 'node:stream'

/** A factory for `isolation: { stream }` whose streams run `entry` (the built stream-entry.cjs) here. */
export function localStreams(entry) {
  return () => {
    const child = spawn(process.execPath, [entry], { env: {}, stdio: ['pipe', 'pipe', 'inherit'] })
    const stream = new Duplex({
      read() {},
      write: (chunk, _encoding, callback) => child.stdin.write(chunk, callback),
      destroy: (error, callback) => {
        child.kill('SIGKILL')
        child.exitCode !== null || child.signalCode !== null ? callback(error) : child.once('exit', () => callback(error))
      },
    })
    child.stdout.on('data', (chunk) => stream.push(chunk))
    child.on('exit', () => stream.destroy())
    return stream
  }
}
