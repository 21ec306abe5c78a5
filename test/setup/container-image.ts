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
  // Only the engine and the image: the runtime finds how to run it here, as a deployment's does.
  project.provide('container', { engine: found.engine, image, ...found.tierOptions })
  return () => {
    spawnSync(found.engine, ['rmi', '-f', image], { stdio: 'ignore' })
  }
}
