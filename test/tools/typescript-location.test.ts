/**
 * TypeScript 7 starts its native compiler, in the host, from a package for this platform that
 * it would look up in every checker thread. The runtime finds it once, where the TypeScript it
 * was given lies, so a compiler a program plants later on Node's lookup path never starts.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { locateTypescript } from '../../src/tools/typescript-location.js'
import { tempDirectory } from '../helpers/sandbox.js'

const PLATFORM_PACKAGE = `@typescript/typescript-${process.platform}-${process.arch}`

function fakePackage(directory: string, name: string, version: string): string {
  mkdirSync(directory, { recursive: true })
  writeFileSync(path.join(directory, 'package.json'), JSON.stringify({ name, version }))
  return directory
}

describe('locating the type check\'s TypeScript', () => {
  const temp = tempDirectory('ptc-typescript-location')
  afterAll(temp.remove)

  it('names no compiler before TypeScript 7', () => {
    const directory = fakePackage(path.join(temp.dir, 'five', 'node_modules', 'typescript'), 'typescript', '5.9.3')
    expect(locateTypescript(directory)).toEqual({ directory, version: '5.9.3' })
  })

  it('names TypeScript 7\'s compiler in the platform package beside it', () => {
    const modules = path.join(temp.dir, 'seven', 'node_modules')
    const directory = fakePackage(path.join(modules, 'typescript'), 'typescript', '7.0.2')
    const platform = fakePackage(path.join(modules, PLATFORM_PACKAGE), PLATFORM_PACKAGE, '7.0.2')
    mkdirSync(path.join(platform, 'lib'))
    writeFileSync(path.join(platform, 'lib', 'tsc'), '')
    expect(locateTypescript(directory)).toEqual({ directory, version: '7.0.2', compiler: path.join(platform, 'lib', 'tsc') })
  })

  it('refuses TypeScript 7 without its platform package, or with one that holds no compiler, naming what is missing', () => {
    const modules = path.join(temp.dir, 'bare', 'node_modules')
    const directory = fakePackage(path.join(modules, 'typescript'), 'typescript', '7.0.2')
    expect(() => locateTypescript(directory)).toThrow(`TypeScript 7.0.2 needs its compiler for this platform, ${PLATFORM_PACKAGE}, which is not installed beside it`)
    fakePackage(path.join(modules, PLATFORM_PACKAGE), PLATFORM_PACKAGE, '7.0.2')
    expect(() => locateTypescript(directory)).toThrow(`TypeScript 7.0.2's compiler is missing from ${PLATFORM_PACKAGE}`)
  })
})
