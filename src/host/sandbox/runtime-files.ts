/**
 * The files a confined helper runs from, and that no program may change: the Node executable,
 * this package and the packages it loads. A program that could append to one of them would run
 * its code in every later helper, or unconfined in the host at its next start.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE_NAME = 'ptc-runtime'

function real(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    return file
  }
}

type Dependencies = Record<string, string> | undefined

function manifest(directory: string): { name?: unknown; dependencies?: Dependencies; peerDependencies?: Dependencies; optionalDependencies?: Dependencies } | undefined {
  try {
    return JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8'))
  } catch {
    return undefined
  }
}

/** This package's directory: the nearest ancestor of this module with our own package.json. */
export function packageRoot(): string {
  let directory = path.dirname(fileURLToPath(import.meta.url))
  while (manifest(directory)?.name !== PACKAGE_NAME) {
    const parent = path.dirname(directory)
    if (parent === directory) throw new Error(`${PACKAGE_NAME}: cannot find its own package.json above ${fileURLToPath(import.meta.url)}`)
    directory = parent
  }
  return directory
}

/** Where Node finds package `name` from `directory`: the first `node_modules/name` up the tree. */
function lookUp(name: string, directory: string): string | undefined {
  for (let current = directory; ; current = path.dirname(current)) {
    const candidate = path.join(current, 'node_modules', name)
    if (existsSync(path.join(candidate, 'package.json'))) return real(candidate)
    if (path.dirname(current) === current) return undefined
  }
}

/**
 * The real directories of this package and of every package it depends on, transitively, as
 * Node would resolve them: dependencies, optional ones that are installed, and peers (Cordis,
 * which the host loads with this package).
 */
function packageClosure(root: string): string[] {
  const found = new Set([real(root)])
  const pending = [real(root)]
  while (pending.length > 0) {
    const directory = pending.pop()!
    const { dependencies, peerDependencies, optionalDependencies } = manifest(directory) ?? {}
    for (const name of Object.keys({ ...dependencies, ...peerDependencies, ...optionalDependencies })) {
      const dependency = lookUp(name, directory)
      if (dependency && !found.has(dependency)) {
        found.add(dependency)
        pending.push(dependency)
      }
    }
  }
  return [...found]
}

/**
 * Real paths of what every confined helper runs from, bound read-only last, over every other
 * mount: the Node executable the helper runs and this package's build. When the host runs
 * inside this package's directory (a checkout of it), only its build and manifest: the rest of
 * that directory (sources, tests, `.git`, an `.env`) stays hidden with the rest of the host's
 * working directory, whose read-only view keeps the build where it is. Computed once: they do
 * not move while the host runs.
 */
export const RUNTIME_PATHS: readonly string[] = (() => {
  const own = real(packageRoot())
  const cwd = real(process.cwd())
  const checkout = cwd === own || cwd.startsWith(`${own}/`)
  const build = checkout ? ['dist', 'package.json'].map((entry) => path.join(own, entry)).filter((entry) => existsSync(entry)) : [own]
  // The build this module was loaded from, wherever it lies: a copy of dist/ (a bench snapshot,
  // a bundler's output) holds the helper and worker files the helper must start from.
  const loaded = real(path.dirname(fileURLToPath(import.meta.url)))
  const covered = build.some((directory) => loaded === directory || loaded.startsWith(`${directory}/`))
  return [real(process.execPath), ...build, ...(covered ? [] : [loaded])]
})()

/**
 * Real paths of the packages this package loads in the host, transitively. The helper and its
 * worker are self-contained bundles that load none of them, so a helper need not see them; but
 * a program must not change them (it would run its code unconfined at the host's next start),
 * so they are bound read-only wherever a writable root would expose them.
 */
export const DEPENDENCY_PATHS: readonly string[] = packageClosure(packageRoot()).slice(1)
