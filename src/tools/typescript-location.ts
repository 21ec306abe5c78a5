/**
 * Where the type check's TypeScript lives: its package directory and, for TypeScript 7, the
 * native compiler it starts. Both are found as this package loads (or as a checker is configured
 * with a directory of its own), never at a check: the compiler runs in the host, outside every
 * sandbox, and a program may write to a `node_modules` on the way Node would look them up.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

export interface TypescriptLocation {
  /** The package directory. */
  directory: string
  version: string
  /** TypeScript 7's native compiler (the executable its platform package holds); absent before 7. */
  compiler?: string
}

/**
 * The TypeScript at `directory`. TypeScript 7 starts its compiler from a package for this
 * platform (`@typescript/typescript-linux-x64`), which it would look up again in every checker
 * thread: it is found here once, and the checker names it. Throws, saying what is missing.
 */
export function locateTypescript(directory: string): TypescriptLocation {
  const manifest = JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')) as { name: string; version: string }
  const { version } = manifest
  if (Number.parseInt(version, 10) < 7) return { directory, version }
  const base = manifest.name.startsWith('@') ? manifest.name.split('/')[1]! : manifest.name
  const platformPackage = `@typescript/${base}-${process.platform}-${process.arch}`
  let platformDirectory: string
  try {
    platformDirectory = path.dirname(createRequire(path.join(directory, 'package.json')).resolve(`${platformPackage}/package.json`))
  } catch {
    throw new Error(`TypeScript ${version} needs its compiler for this platform, ${platformPackage}, which is not installed beside it`)
  }
  const compiler = path.join(platformDirectory, 'lib', base === 'typescript' ? 'tsc' : 'tsgo')
  if (!existsSync(compiler)) throw new Error(`TypeScript ${version}'s compiler is missing from ${platformPackage} (no ${compiler})`)
  return { directory, version, compiler }
}
