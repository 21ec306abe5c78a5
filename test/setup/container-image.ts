import { spawnSync } from 'node:child_process'
import type { TestProject } from 'vitest/node'
import { containerEngine } from '../helpers/container.js'

/**
 * Where podman can run containers, builds the container tier's image once for the whole test
 * run (after the package is built: this setup comes second) and removes it at the end. Tests
 * read the options with `containerOptions()`; without podman they get `undefined` and skip.
 */
export default async function setup(project: TestProject) {
  const found = await containerEngine()
  project.provide('container', undefined)
  if (!found) return
  const { buildImage } = await import('ptc-runtime')
  const image = await buildImage({ engine: found.engine, tag: `ptc-runtime-test-${process.pid}:latest` })
  const at = found.runArgs.indexOf('--runtime')
  const runtime = at === -1 ? undefined : found.runArgs[at + 1]
  const args = at === -1 ? found.runArgs : found.runArgs.filter((_, index) => index !== at && index !== at + 1)
  project.provide('container', { engine: found.engine, image, ...(runtime ? { runtime } : {}), args })
  return () => {
    spawnSync(found.engine, ['rmi', '-f', image], { stdio: 'ignore' })
  }
}
