/** Finding the host's commands (bubblewrap, a container engine, an OCI runtime). */
import { accessSync, constants, statSync } from 'node:fs'
import path from 'node:path'

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}

/**
 * The absolute path of a command: `command` itself when it is a path, otherwise the first
 * executable of that name on the host's PATH. `undefined` when there is none.
 */
export function locateCommand(command: string, searchPath = process.env.PATH ?? ''): string | undefined {
  if (command.includes('/')) return isExecutableFile(command) ? command : undefined
  for (const directory of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(directory)) continue
    const candidate = path.join(directory, command)
    if (isExecutableFile(candidate)) return candidate
  }
  return undefined
}
