#!/usr/bin/env node
/**
 * `ptc-runtime-image`: builds the container image `isolation: 'container'` runs its helper in.
 * No image registry is assumed reachable, so there is no base image to pull: the image is
 * assembled from this machine's own Node executable and the libraries it loads. Prints progress
 * to stderr and the image's tag to stdout; exits 0 when built, 1 when the build failed, 2 on a
 * usage error.
 */
import { parseArgs } from 'node:util'
import { type BuildImageOptions, DEFAULT_IMAGE, buildImage } from '../host/environments/container/image.js'
import { UsageError } from './args.js'

const USAGE = `Usage:
  ptc-runtime-image [--engine podman|docker] [--tag <name>] [--node <path>]

Builds the container image that ptc-runtime's container isolation runs programs in, from this
machine's Node executable, the shared libraries it loads, /bin/sh and ptc-runtime's helper files.
Nothing is downloaded.

  --engine <name>   container engine to import the image into (default: podman, else docker)
  --tag <name>      the image's name (default ${DEFAULT_IMAGE}, the one the container tier runs)
  --node <path>     Node executable to put in the image (default: the one running this command)
  -h, --help        show this help

Exit codes: 0 built, 1 the build failed, 2 usage error.`

/** What the command line asks for: help, or a build with these options. */
function parseCommand(argv: readonly string[]): 'help' | BuildImageOptions {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        engine: { type: 'string' },
        tag: { type: 'string' },
        node: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (error) {
    // parseArgs explains unknown flags and missing values well; keep its first sentence.
    throw new UsageError((error as Error).message.split('. ')[0] ?? 'invalid arguments')
  }
  const { values } = parsed
  if (values.help) return 'help'
  return { engine: values.engine, tag: values.tag, node: values.node }
}

async function main(argv: readonly string[]): Promise<number> {
  let command
  try {
    command = parseCommand(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    process.stderr.write(`ptc-runtime-image: ${error.message}\n\n${USAGE}\n`)
    return 2
  }
  if (command === 'help') {
    process.stdout.write(`${USAGE}\n`)
    return 0
  }
  try {
    const tag = await buildImage({ ...command, log: (line) => process.stderr.write(`${line}\n`) })
    process.stdout.write(`${tag}\n`)
    return 0
  } catch (error) {
    process.stderr.write(`ptc-runtime-image: ${(error as Error).message}\n`)
    return 1
  }
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`ptc-runtime-image: internal error: ${(error as Error)?.stack ?? String(error)}\n`)
    process.exitCode = 1
  },
)
