/**
 * Files no path names (Linux's `O_TMPFILE`), for what the host makes once and hands to its
 * environments: nothing that can write in the temporary directory (a program whose writable root
 * holds it) can replace, change or redirect one, and the kernel frees it with the last descriptor,
 * however the host process ends.
 */
import { closeSync, constants, fchmodSync, fstatSync, openSync, writeSync } from 'node:fs'
import os from 'node:os'

/** Linux's `O_TMPFILE`, which Node's `fs.constants` does not name: its own bit with `O_DIRECTORY`. */
const O_TMPFILE = 0o20000000 | constants.O_DIRECTORY

/** A new unnamed file in the temporary directory, open for reading and writing by this user only. */
export function unnamedFile(): number {
  return openSync(os.tmpdir(), O_TMPFILE | constants.O_RDWR, 0o600)
}

/**
 * An unnamed read-only file holding `bytes`: the descriptor returned cannot write it, and its
 * mode lets nobody open it for writing without the privilege to override that.
 */
export function unnamedCopy(bytes: Uint8Array): number {
  const fd = unnamedFile()
  try {
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written)
    fchmodSync(fd, 0o400)
    return openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY)
  } finally {
    closeSync(fd)
  }
}

/**
 * What the descriptor leads to: the file (device and inode, which a freed file's successor may
 * reuse), its size and change time (a write, a truncation or a mode change moves them).
 * Undefined for a descriptor no longer open.
 */
export function fileIdentity(fd: number): string | undefined {
  try {
    const { dev, ino, size, ctimeMs } = fstatSync(fd)
    return `${dev}:${ino}:${size}:${ctimeMs}`
  } catch {
    return undefined
  }
}
