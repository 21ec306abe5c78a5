/**
 * The host places a confined helper does not see. Each becomes an empty tmpfs of the helper's
 * own, discarded with it: `/tmp` stays writable (the program's scratch space, bounded in size);
 * the others are read-only, so hiding them gives the program no further room to store data.
 */
import { realpathSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** Whether `file` is `top` or lies beneath it. */
export const within = (file: string, top: string) => file === top || file.startsWith(`${top}/`)

/** The real path of `file`, or `file` itself when it does not exist. */
export function real(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    return file
  }
}

/**
 * Directories a confined program needs to run anything at all: hiding the host's working
 * directory must never hide one of these (a service started in `/` or `/usr`).
 */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt', '/nix', '/proc', '/dev', '/sys']

/** Hiding `place` would hide the system: it is `/`, holds a system directory, or lies inside /proc, /dev or /sys. */
function holdsSystem(place: string): boolean {
  if (place === '/') return true
  return SYSTEM.some((system) => within(system, place)) || ['/proc', '/dev', '/sys'].some((pseudo) => within(place, pseudo))
}

/** A private place of a confined helper: where it is, and whether the program may write there. */
export interface PrivatePlace {
  path: string
  writable: boolean
}

/**
 * The places a confined helper sees as empty private tmpfs mounts: `/tmp` (writable), and,
 * read-only, where the host keeps what no program should read: `/var/tmp`, `/run` and the
 * user's runtime directory (the sockets of tmux, D-Bus, Docker, ssh and gpg agents), the host
 * user's home (`~/.ssh`, `~/.aws`, shell history) and the host's working directory (its `.env`,
 * its code). Real paths of existing directories, none inside another.
 */
export function privatePlaces(hostCwd = process.cwd()): PrivatePlace[] {
  const uid = process.getuid?.()
  let passwdHome: string | undefined
  try {
    passwdHome = os.userInfo().homedir
  } catch {
    // no passwd entry for this user
  }
  const candidates: Array<[string | undefined, boolean]> = [
    ['/tmp', true],
    ['/var/tmp', false],
    ['/run', false],
    ['/var/run', false],
    [process.env.XDG_RUNTIME_DIR, false],
    [uid === undefined ? undefined : `/run/user/${uid}`, false],
    [os.homedir(), false],
    [passwdHome, false],
    [hostCwd, false],
  ]
  const places = new Map<string, boolean>()
  for (const [candidate, writable] of candidates) {
    if (!candidate || !path.isAbsolute(candidate)) continue
    const resolved = real(candidate)
    if (holdsSystem(resolved) || places.has(resolved)) continue
    try {
      if (statSync(resolved).isDirectory()) places.set(resolved, writable)
    } catch {
      // not on this host
    }
  }
  // A place inside another is covered by it, except a read-only one inside a writable one (the
  // host's cwd under /tmp): that one is mounted after its parent, so it stays read-only and empty.
  const all = [...places.keys()].sort((a, b) => a.length - b.length)
  const covered = (place: string, other: string) => other !== place && within(place, other) && !(places.get(other) && !places.get(place))
  return all.filter((place) => !all.some((other) => covered(place, other))).map((place) => ({ path: place, writable: places.get(place)! }))
}
