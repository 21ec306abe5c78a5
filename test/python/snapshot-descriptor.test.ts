/**
 * The host's descriptor of Python's snapshot. A thread-tier program shares the host's process and
 * can close it; the host then opens something else under the same number, which it must not hand
 * to later environments as the snapshot.
 */
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { pythonRuntime } from '../../src/python/runtime.js'
import { helperPythonSnapshot, pythonSnapshot, threadSnapshot } from '../../src/python/snapshot.js'

describe('the host’s descriptor of the Python snapshot', () => {
  it('is handed on only while it leads to the snapshot', { timeout: 120_000 }, async () => {
    await pythonSnapshot(pythonRuntime())
    const handed = helperPythonSnapshot()
    expect(handed).toBeDefined()
    expect(threadSnapshot()).toMatchObject({ descriptor: handed!.descriptor, own: false, bytes: handed!.snapshot.bytes })

    const directory = mkdtempSync(path.join(os.tmpdir(), 'ptc-snapshot-descriptor-'))
    closeSync(handed!.descriptor)
    // Files opened until one takes the number (each open takes the lowest free one).
    const opened: number[] = []
    try {
      while (opened.length < 256 && opened.at(-1) !== handed!.descriptor) opened.push(openSync(path.join(directory, `decoy-${opened.length}`), 'w'))
      expect(opened.at(-1)).toBe(handed!.descriptor)
      expect(helperPythonSnapshot()).toBeUndefined()
      expect(threadSnapshot()).toBeUndefined()
    } finally {
      for (const fd of opened) closeSync(fd)
      rmSync(directory, { recursive: true, force: true })
    }
  })
})
