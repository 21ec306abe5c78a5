/**
 * The places a confined helper does not see: which host directories become an empty private
 * tmpfs, which of them stay writable, and which are never hidden because the system lives there.
 */
import { existsSync } from 'node:fs'
import os from 'node:os'
import { describe, expect, it } from 'vitest'
import { privatePlaces } from '../../src/host/sandbox/places.js'
import { tempDirectory } from '../helpers/sandbox.js'

const paths = (hostCwd: string) => privatePlaces(hostCwd).map((place) => place.path)

describe('private places', () => {
  it("hide the host user's home and the host's working directory, read-only; only /tmp stays writable", () => {
    const project = tempDirectory('ptc-places')
    try {
      const places = privatePlaces(os.homedir() === '/' ? project.dir : process.cwd())
      expect(places.filter((place) => place.writable).map((place) => place.path)).toEqual(['/tmp'])
      if (os.homedir() !== '/') expect(paths(process.cwd())).toContain(os.homedir())
      // A working directory under /tmp is a read-only place of its own, after /tmp: inside the
      // private /tmp it stays empty and read-only rather than an ordinary writable path.
      const underTmp = privatePlaces(project.dir)
      expect(underTmp.filter((place) => place.path.startsWith(project.dir))).toEqual([{ path: project.dir, writable: false }])
      expect(underTmp.findIndex((place) => place.path === '/tmp')).toBeLessThan(underTmp.findIndex((place) => place.path === project.dir))
    } finally {
      project.remove()
    }
  })

  it.each(['/', '/usr', '/etc', '/proc/self'])('never hide the system: a host running in %s keeps it visible', (hostCwd) => {
    expect(paths(hostCwd)).not.toContain(hostCwd)
    expect(paths(hostCwd).some((place) => ['/', '/usr', '/etc', '/bin', '/lib'].includes(place))).toBe(false)
  })

  it.skipIf(!existsSync('/usr/src'))("hide a service's own directory under /usr (a container's WORKDIR such as /usr/src/app)", () => {
    expect(paths('/usr/src')).toContain('/usr/src')
  })
})
