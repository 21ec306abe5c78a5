/**
 * The ready tool's type check, against the TypeScript at PTC_TEST_TYPESCRIPT (a package
 * directory: CI runs this file against TypeScript 6 and 7 too), or the one this package resolves.
 * The check runs off the host's thread: a type-level bomb fails its own run clearly, within the
 * run's deadline or a memory budget, while the host's event loop and other runs go on.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'
import { longestStall } from '../helpers/stall.js'
import { tempDirectory } from '../helpers/sandbox.js'

const TYPESCRIPT = process.env.PTC_TEST_TYPESCRIPT
const typescriptDirectory = TYPESCRIPT ?? path.dirname(createRequire(import.meta.url).resolve('typescript/package.json'))
const version = (JSON.parse(readFileSync(path.join(typescriptDirectory, 'package.json'), 'utf8')) as { version: string }).version

const weather = defineToolGroup({
  global: 'weather',
  tools: {
    forecast: {
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      outputSchema: { type: 'object', properties: { highC: { type: 'number' } }, required: ['highC'] },
      run: ({ city }) => ({ highC: city === 'Oslo' ? 14 : 22 }),
    },
    // No outputSchema, as most AI SDK and many MCP tools.
    conditions: {
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      run: ({ city }) => ({ wind: { speedKmh: city === 'Oslo' ? 12 : 30 }, sky: 'clear' }),
    },
  },
})

/** Mapped types in the ring: TypeScript 7 checks eight in about 2 s on an idle machine, under a 3 s deadline. */
const RING = 32

/** Template-literal unions crossed into mapped types, compared in a ring: seconds of checking for a few lines. */
const TIME_BOMB = [
  "type L = 'a'|'b'|'c'|'d'|'e'|'f'|'g'|'h'|'i'|'j'|'k'|'l'|'m'|'n'|'o'|'p'",
  ...Array.from({ length: RING }, (_, n) => `type Q${n} = \`\${L}\${L}\${L}\${L}${n}\`\ntype M${n} = { [K in Q${n}]: { [J in K]: [K, J] } }\ndeclare const v${n}: M${n}`),
  ...Array.from({ length: RING }, (_, n) => `const w${n}: M${(n + 1) % RING} = v${n}`),
  'return 1',
].join('\n')

/** Four mapped types of 65 536 members compared in a ring: hundreds of MB. */
const MEMORY_BOMB = [
  "type L = 'a'|'b'|'c'|'d'|'e'|'f'|'g'|'h'|'i'|'j'|'k'|'l'|'m'|'n'|'o'|'p'",
  'type Q = `${L}${L}${L}${L}`',
  ...Array.from({ length: 4 }, (_, n) => `type M${n} = { [K in Q as \`\${K}${n}\`]: [K, \`\${K}\${K}\`] }\ndeclare const v${n}: M${n}`),
  ...Array.from({ length: 4 }, (_, n) => `const w${n}: M${(n + 1) % 4} = v${n}`),
  'return 1',
].join('\n')

const GOOD = "const day = await weather.forecast({ city: 'Oslo' })\nreturn day.highC"

describe(`typecheck with TypeScript ${version}`, () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  const typecheck = TYPESCRIPT ? { typescript: TYPESCRIPT } : true
  // A time bomb also grows TypeScript 7's memory, past the default 512 MB within 3 s on a fast
  // machine: its tests give memory room so that the bound under test is the one that ends it.
  const timeBound = { ...(TYPESCRIPT ? { typescript: TYPESCRIPT } : {}), maxMemoryMb: 4096 }
  beforeAll(async () => {
    env = await startRuntime({ language: 'typescript', isolation: 'thread', timeoutMs: 30_000 })
  })
  afterAll(() => env.dispose())

  it('does not run a program whose call does not check, and says where', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck })
    expect(await tool.execute({ program: "const day = await weather.forecast({ town: 'Oslo' })\nreturn day.highF" })).toBe(
      [
        'Error (exception): The program does not type-check against the declared tools; nothing ran.',
        "TS2353: Object literal may only specify known properties, and 'town' does not exist in type '{ city: string; }'. (line 1, column 38)",
        "TS2551: Property 'highF' does not exist on type '{ highC: number; }'. Did you mean 'highC'? (line 2, column 12)",
      ].join('\n'),
    )
    expect(await tool.execute({ program: GOOD })).toBe('Result:\n14')
    await tool.close()
  })

  it('refuses a program over maxProgramBytes before checking it, as the run itself would', async () => {
    const checked = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck })
    const unchecked = createRunCodeTool({ runtime: env.runtime, groups: [weather] })
    // It would not check either: the refusal it gets says it is too long, not that.
    const program = `const n: string = 5\n// ${'x'.repeat(70_000)}\nreturn n`
    try {
      const answer = await checked.execute({ program })
      expect(answer).toBe('Error (exception): The program is over 65536 bytes; a program may be at most 65536 bytes (maxProgramBytes). Keep data out of the program: have it fetched by a tool call.')
      expect(answer).toBe(await unchecked.execute({ program }))
    } finally {
      await checked.close()
    }
  })

  it('checks the arguments of a tool without an outputSchema and lets its result be used', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck })
    const program = "const now = await weather.conditions({ city: 'Oslo' })\nreturn `${now.sky}: ${now.wind.speedKmh.toFixed(0)} km/h`"
    expect(await tool.execute({ program })).toBe('Result:\n"clear: 12 km/h"')
    expect(await tool.execute({ program: 'const now = await weather.conditions({ city: 7 })\nreturn now.sky' })).toMatch(
      /TS2322: Type 'number' is not assignable to type 'string'\. \(line 1, column 40\)/,
    )
    await tool.close()
  })

  it('fails a type-level bomb at the run’s deadline while the host stays responsive and another run goes on', async () => {
    const bombed = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck: timeBound, timeoutMs: 3000 })
    const other = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck, timeoutMs: 20_000 })
    try {
      const started = performance.now()
      const { result, stallMs } = await longestStall(() => Promise.all([bombed.execute({ program: TIME_BOMB }), other.execute({ program: GOOD })]))
      expect(result[0]).toBe("Error (timeout): The type check did not finish within 3000 ms (the run's time budget); nothing ran. Simplify the program's types.")
      expect(result[1]).toBe('Result:\n14')
      expect(performance.now() - started).toBeLessThan(15_000)
      // Checking the bomb on the host's own thread held it for seconds.
      expect(stallMs).toBeLessThan(1000)
    } finally {
      await Promise.all([bombed.close(), other.close()])
    }
  }, 30_000)

  it('stops a check at maxCheckMs whatever the run’s budget', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck: { ...timeBound, maxCheckMs: 2500 }, timeoutMs: 60_000 })
    try {
      // The good program after it is checked by a fresh (cold) checker under the same bound: 300-500 ms here.
      expect(await tool.execute({ program: TIME_BOMB })).toBe("Error (timeout): The type check did not finish within 2500 ms (typecheck.maxCheckMs); nothing ran. Simplify the program's types.")
      expect(await tool.execute({ program: GOOD })).toBe('Result:\n14')
    } finally {
      await tool.close()
    }
  })

  it('checks a waiting conversation before another bomb of a conversation whose bombs hold every checker', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck: { ...timeBound, maxCheckMs: 3000 }, timeoutMs: 60_000 })
    const attacker = {}
    const other = {}
    const ended: string[] = []
    const settle = (label: string, answer: Promise<string>) => answer.then((text) => {
      ended.push(label)
      return text
    })
    try {
      // Two bombs take both checkers; two more wait.
      const bombs = [1, 2, 3, 4].map((n) => settle(`bomb ${n}`, tool.execute({ program: TIME_BOMB }, { stateOwner: attacker })))
      // The other conversation arrives after the attacker's waiting bombs, and is checked before the second of them.
      await new Promise((resolve) => setTimeout(resolve, 200))
      const good = settle('other', tool.execute({ program: GOOD }, { stateOwner: other }))
      expect(await good).toBe('Result:\n14')
      for (const bomb of await Promise.all(bombs)) expect(bomb).toMatch(/^Error \(timeout\): The type check did not finish within 3000 ms/)
      expect(ended.indexOf('other')).toBeLessThan(ended.indexOf('bomb 4'))
    } finally {
      await tool.close()
    }
  }, 30_000)

  it('checks a conversation whose checks stay in bounds before those of conversations whose checks overran', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck: { ...timeBound, maxCheckMs: 1500 }, timeoutMs: 60_000 })
    let stop = false
    let ended = 0
    // Four conversations each send a bomb after the last: two hold the checkers, two wait.
    const attackers = [1, 2, 3, 4].map(async () => {
      const owner = {}
      while (!stop) {
        expect(await tool.execute({ program: TIME_BOMB }, { stateOwner: owner })).toMatch(/^Error \(timeout\): The type check did not finish within 1500 ms/)
        ended++
      }
    })
    try {
      // Once each has overrun, the other conversation arrives, behind two waiting bombs.
      while (ended < 4) await new Promise((resolve) => setTimeout(resolve, 50))
      const before = ended
      expect(await tool.execute({ program: GOOD }, { stateOwner: {} })).toBe('Result:\n14')
      // It took the first checker freed (and the other one may have ended meanwhile); behind the two waiting bombs, it took the third.
      expect(ended - before).toBeLessThan(3)
    } finally {
      stop = true
      await Promise.all(attackers)
      await tool.close()
    }
  }, 90_000)

  it('refuses a conversation’s check past the checks it may have waiting, naming the rule; checks of no conversation count as one', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck })
    const refusals = new Map<object | undefined, string>([
      [{}, 'Error (exception): This conversation already has 4 programs waiting for their type check, the most one conversation may have waiting (typecheck: 4 per stateOwner); nothing ran. Send the next program when one has finished.'],
      [undefined, 'Error (exception): Calls that name no conversation (no stateOwner) already have 4 programs waiting for their type check, the most they may have waiting together (typecheck: 4 per stateOwner; pass each conversation\'s stateOwner to the tool to tell them apart); nothing ran. Send the next program when one has finished.'],
    ])
    try {
      for (const [owner, refusal] of refusals) {
        // Two take the checkers, four wait, the seventh is refused; another conversation's is not.
        const answers = await Promise.all([
          ...Array.from({ length: 7 }, () => tool.execute({ program: GOOD }, owner ? { stateOwner: owner } : {})),
          tool.execute({ program: GOOD }, { stateOwner: {} }),
        ])
        expect(answers).toEqual([...Array.from({ length: 6 }, () => 'Result:\n14'), refusal, 'Result:\n14'])
      }
    } finally {
      await tool.close()
    }
  })

  it('fails a check that outgrows its memory budget, saying so, and the next check works', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck: { ...(TYPESCRIPT ? { typescript: TYPESCRIPT } : {}), maxMemoryMb: 128, maxCheckMs: 600_000 }, timeoutMs: 60_000 })
    try {
      const { result, stallMs } = await longestStall(() => tool.execute({ program: MEMORY_BOMB }))
      expect(result).toBe("Error (exception): The type check ran out of its memory budget (128 MB); nothing ran. Simplify the program's types.")
      expect(stallMs).toBeLessThan(1000)
      // The next check gets a fresh worker.
      expect(await tool.execute({ program: GOOD })).toBe('Result:\n14')
    } finally {
      await tool.close()
    }
  }, 90_000)

  it('stops a check when the run is aborted', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 300)
    expect(await tool.execute({ program: TIME_BOMB }, { signal: controller.signal })).toBe('Error (abort): The run was aborted during its type check; nothing ran.')
    await tool.close()
  })

  it('reads no file of the host\'s: a program learns neither what a hidden file holds nor whether one exists', async () => {
    // The compiler runs in the host, where the sandbox hides nothing: its messages name literal types.
    const temp = tempDirectory('ptc-typecheck-reads')
    writeFileSync(path.join(temp.dir, 'secret.ts'), 'export const token = "sk-hidden-4242"\n')
    writeFileSync(path.join(temp.dir, 'global.d.ts'), 'declare const hidden: "sk-global-77"\n')
    const tool = createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck })
    try {
      const imported = await tool.execute({ program: `const m = await import(${JSON.stringify(path.join(temp.dir, 'secret'))})\nconst n: typeof m.token = 5\nreturn n` })
      const referenced = await tool.execute({ program: `/// <reference path=${JSON.stringify(path.join(temp.dir, 'global.d.ts'))} />\nconst n: typeof hidden = 5\nreturn n` })
      for (const answer of [imported, referenced]) expect(answer).not.toMatch(/sk-hidden-4242|sk-global-77/)
      // A file that exists and one that does not are told apart by nothing but their names.
      const told = async (file: string) => [
        await tool.execute({ program: `type T = typeof import(${JSON.stringify(path.join(temp.dir, file))})\nreturn 1` }),
        await tool.execute({ program: `/// <reference path=${JSON.stringify(path.join(temp.dir, `${file}.d.ts`))} />\nreturn 1` }),
      ]
      expect((await told('global')).map((answer) => answer.replaceAll('global', 'absent'))).toEqual(await told('absent'))
    } finally {
      await tool.close()
      temp.remove()
    }
  })

  it('refuses a TypeScript directory that holds no TypeScript when the tool is made', () => {
    expect(() => createRunCodeTool({ runtime: env.runtime, groups: [weather], typecheck: { typescript: '/nonexistent/typescript' } })).toThrow(
      'typecheck: typescript must be the directory of a TypeScript package (one holding its package.json), got "/nonexistent/typescript"',
    )
  })
})
