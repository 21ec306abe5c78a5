/**
 * What a run's end does to its environment (src/host/run/endings.ts): the decision the session
 * follows, checked on its own for every case the session meets.
 */
import { describe, expect, it } from 'vitest'
import { EXITED_NOTICE, LOST, UNSTOPPED_NOTICE, type RunEnd, lostNotice, verdictOf } from '../../src/host/run/endings.js'
import type { PtcFailureKind } from '../../src/seam/types.js'

const kept: RunEnd = {
  kind: undefined,
  sent: true,
  endedUnstarted: false,
  refused: false,
  runs: 2,
  initializerFailed: false,
  unusable: false,
  alive: true,
  byWorker: true,
  oneShot: false,
}

describe('the end of a run', () => {
  it('keeps the environment of a completed run or a program failure, once what it reported starting is killed', () => {
    const tidy = { kind: 'tidy', thorough: false, clean: { disposition: 'keep' }, unclean: { disposition: 'discard', notice: UNSTOPPED_NOTICE } }
    expect(verdictOf(kept)).toEqual(tidy)
    expect(verdictOf({ ...kept, kind: 'exception' })).toEqual(tidy)
  })

  it('discards it on every failure kind with a LOST reason, searching first when the program may still run, with that reason as the notice', () => {
    const discarding = (Object.keys(LOST) as PtcFailureKind[]).filter((kind) => LOST[kind] !== null)
    expect(discarding).toHaveLength(6)
    for (const kind of discarding) {
      expect(verdictOf({ ...kept, kind, byWorker: false })).toEqual({ kind: 'discard', search: true, notice: lostNotice(LOST[kind]!) })
    }
    expect(verdictOf({ ...kept, alive: false })).toEqual({ kind: 'discard', search: false, notice: lostNotice('its environment ended') })
    expect(verdictOf({ ...kept, kind: 'exception', unusable: true })).toEqual({ kind: 'discard', search: false, notice: lostNotice('its environment became unusable') })
  })

  it('keeps the environment, state and all, of a run it refused before any of it reached the worker', () => {
    expect(verdictOf({ ...kept, kind: 'sandbox-unavailable', refused: true, byWorker: false })).toEqual({ kind: 'refused' })
    expect(verdictOf({ ...kept, kind: 'exception', refused: true, byWorker: false, oneShot: true })).toEqual({ kind: 'refused' })
    // An environment that died meanwhile is discarded as usual.
    expect(verdictOf({ ...kept, kind: 'sandbox-unavailable', refused: true, byWorker: false, alive: false }).kind).toBe('discard')
  })

  it('loses nothing when the program never ran there or only the initializer failed', () => {
    expect(verdictOf({ ...kept, kind: 'abort', sent: false, byWorker: false })).toEqual({ kind: 'discard', search: false })
    expect(verdictOf({ ...kept, kind: 'exception', initializerFailed: true })).toEqual({ kind: 'discard', search: false })
  })

  it('marks a run whose environment ended before its code started as unstarted, with a notice only when earlier runs left state', () => {
    expect(verdictOf({ ...kept, kind: 'worker-exit', endedUnstarted: true, runs: 1 })).toEqual({ kind: 'unstarted' })
    expect(verdictOf({ ...kept, kind: 'worker-exit', endedUnstarted: true, runs: 3 })).toEqual({ kind: 'unstarted', notice: EXITED_NOTICE })
  })

  it('lets a one-shot environment that ended its run itself be disposed after the result', () => {
    expect(verdictOf({ ...kept, kind: 'output-limit', oneShot: true })).toEqual({
      kind: 'tidy',
      thorough: false,
      clean: { disposition: 'discard-after-result' },
      unclean: { disposition: 'discard' },
    })
  })
})
