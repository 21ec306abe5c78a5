import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ToolGroup, createRunCodeTool, defineToolGroup } from 'ptc-runtime'
import { startRuntime } from '../helpers/runtime.js'
import { typecheck } from '../helpers/typecheck.js'

const SERVICES = ['github', 'calendar', 'mail', 'crm', 'billing', 'storage', 'chat', 'wiki', 'tickets', 'deploy', 'metrics', 'search', 'hr', 'docs', 'maps', 'photos', 'notes', 'tasks', 'forms', 'ads']
const NOUNS = ['issue', 'comment', 'label', 'member', 'file', 'event', 'report', 'invoice', 'webhook', 'project']
const VERBS = ['create', 'get', 'list', 'update', 'delete', 'archive', 'restore', 'export', 'share', 'watch']

const called: string[] = []

/** `services` groups of 100 tools each (`verb_noun`), a realistic shape for a big catalog. */
function generatedGroups(services: number, perGroup = 100): ToolGroup[] {
  return SERVICES.slice(0, services).map((service) => {
    const tools: Parameters<typeof defineToolGroup>[0]['tools'] = {}
    for (const noun of NOUNS) {
      for (const verb of VERBS) {
        if (Object.keys(tools).length === perGroup) break
        tools[`${verb}_${noun}`] = {
          description: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${verb === 'list' ? `the ${noun}s` : `a ${noun}`} in ${service}.`,
          inputSchema: {
            type: 'object',
            properties: { id: { type: 'string', description: `The ${noun} id` }, note: { type: 'string' } },
            required: verb === 'list' || verb === 'create' ? [] : ['id'],
          },
          outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          run: (args) => {
            called.push(`${service}.${verb}_${noun} ${JSON.stringify(args)}`)
            return { ok: true }
          },
        }
      }
    }
    return defineToolGroup({
      global: service,
      description: `The ${service} service.\nMore detail the summary leaves out.`,
      errorClass: { name: `${service[0]!.toUpperCase()}${service.slice(1)}Error`, memberNameProperty: 'tool' },
      tools,
    })
  })
}

describe('in-program tool discovery', () => {
  let env: Awaited<ReturnType<typeof startRuntime>>
  const large = generatedGroups(20)
  beforeAll(async () => {
    env = await startRuntime({ isolation: 'thread', timeoutMs: 10_000 })
  })
  afterAll(() => env.dispose())

  it('turns on above 40 tools by default, and a threshold, always or never decide otherwise', () => {
    const runtime = env.runtime
    expect(createRunCodeTool({ runtime, groups: generatedGroups(1, 40) }).discovery).toBe(false)
    expect(createRunCodeTool({ runtime, groups: generatedGroups(1, 41) }).discovery).toBe(true)
    expect(createRunCodeTool({ runtime, groups: generatedGroups(1, 41), discovery: 100 }).discovery).toBe(false)
    expect(createRunCodeTool({ runtime, groups: generatedGroups(1, 5), discovery: 'always' }).discovery).toBe(true)
    expect(createRunCodeTool({ runtime, groups: large, discovery: 'never' }).discovery).toBe(false)
    expect(() => createRunCodeTool({ runtime, groups: large, discovery: -1 })).toThrow("discovery must be 'always', 'never' or a tool count")
  })

  it('a hand-built group without a tools list works without discovery and is refused with it', () => {
    const functions = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`f${index}`, async () => null]))
    const handBuilt = { namespace: { global: 'legacy', functions }, declarations: 'declare const legacy: object' } as unknown as ToolGroup
    expect(createRunCodeTool({ runtime: env.runtime, groups: [handBuilt], discovery: 'never' }).description).toContain('declare const legacy: object')
    expect(() => createRunCodeTool({ runtime: env.runtime, groups: [handBuilt] })).toThrow('discovery needs each group\'s tools list; group "legacy" has none')
  })

  it('describes 2 000 tools as their groups, a count and one line each, in under 2 000 tokens', () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: large })
    expect(tool.description).toContain('0 of 2000 tools shown.')
    expect(tool.description).toContain('Search works only inside a program: `catalog` is not a tool you can call directly.')
    expect(tool.description).toContain('/** The github service. 100 tools: find them with catalog.search. */\ndeclare const github: ToolGroup')
    expect(tool.description).not.toContain('More detail')
    // About four characters per token for English and code: 8 000 characters stay under 2 000 tokens.
    expect(tool.description.length).toBeLessThan(8000)
    expect(tool.bindings.map((namespace) => namespace.global).at(-1)).toBe('catalog')
  })

  it('declares catalog and the groups in TypeScript that compiles with a program that uses them', () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: large })
    const declarations = /```ts\n([\s\S]*)\n```$/.exec(tool.description)![1]!
    const result = typecheck(declarations, [
      `const [hit] = await catalog.search('close an issue', { limit: 3 })\nconst text: string = await catalog.describe(hit!.name)\nawait github.archive_issue({ id: '1' }).catch((error) => error instanceof GithubError && error.tool)\ninspect(text)`,
    ])
    expect(result).toEqual({ declarations: [], samples: [[]] })
  })

  it('a program finds the right tool with catalog.search and calls it, and no tool runs for the search', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: large })
    called.length = 0
    const text = await tool.execute({
      program: `const hits = await catalog.search('archive an invoice in billing', { limit: 3 })
        const [group, name] = hits[0].name.split('.')
        await globalThis[group][name]({ id: 'INV-7' })
        return hits.map((hit) => hit.name)`,
    })
    const names = JSON.parse(text.replace(/^Result:\n/, '')) as string[]
    expect(names[0]).toBe('billing.archive_invoice')
    expect(names.every((name) => /^billing\.\w+_invoice$/.test(name))).toBe(true)
    expect(called).toEqual(['billing.archive_invoice {"id":"INV-7"}'])
  })

  it('each search result carries the description and the declaration of the tool alone', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: large })
    const result = await env.run(`return await catalog.search('watch webhooks on github', { limit: 1 })`, { bindings: tool.bindings })
    expect(result.value).toEqual([
      {
        name: 'github.watch_webhook',
        description: 'Watch a webhook in github.',
        declaration: 'declare const github: {\n  /** Watch a webhook in github. */\n  watch_webhook(args: {\n    /** The webhook id */\n    id: string\n    note?: string\n  }): Promise<{\n    ok: boolean\n  }>\n}',
      },
    ])
  })

  it('describe answers one declaration, and an unknown name comes back with the closest ones', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: large })
    const result = await env.run(
      `return [await catalog.describe('mail.list_file'), await catalog.describe('mail.list_fils').catch((error) => error.message)]`,
      { bindings: tool.bindings },
    )
    const [declaration, message] = result.value as [string, string]
    expect(declaration).toContain('list_file(args?: {')
    expect(message).toBe('catalog.describe: no tool is named "mail.list_fils"; close: mail.list_file, maps.list_file, mail.list_issue')
  })

  it('a bad query or limit rejects in the program, naming the rule', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: large })
    const result = await env.run(
      `return [await catalog.search('').catch((e) => e.message), await catalog.search('issue', { limit: 500 }).catch((e) => e.message), (await catalog.search('issue')).length]`,
      { bindings: tool.bindings },
    )
    expect(result.value).toEqual(['catalog.search: the query must be a non-empty string of words', 'catalog.search: limit must be an integer from 1 to 50, got 500', 10])
    expect(result.calls.map((call) => call.outcome)).toEqual(['refused', 'refused', 'ok'])
  })

  it('an unknown name longer than the limit is refused at once, naming the limit, without a suggestion', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: large })
    const result = await env.run(`return await catalog.describe('x'.repeat(250_000)).catch((e) => e.message)`, { bindings: tool.bindings })
    expect(result.value).toBe('catalog.describe: the name has 250000 characters, over the limit of 256 (no tool name is longer)')
    expect(result.calls.map((call) => call.outcome)).toEqual(['refused'])
  })

  it('a query over the character or word limit is refused, naming the limit', async () => {
    const tool = createRunCodeTool({ runtime: env.runtime, groups: large })
    const result = await env.run(
      `const words = Array.from({ length: 300_000 }, (_, i) => 'w' + i.toString(36))
      return [
        await catalog.search(words.join(' ')).catch((e) => e.message),
        await catalog.search(words.slice(0, 40).join(' ')).catch((e) => e.message),
        (await catalog.search(words.slice(0, 31).join(' ') + ' invoice')).length,
      ]`,
      { bindings: tool.bindings },
    )
    expect(result.value).toEqual([
      'catalog.search: the query has 1752011 characters, over the limit of 1000; say in a few words what the tool does',
      'catalog.search: the query has 40 distinct words, over the limit of 32; say in a few words what the tool does',
      10,
    ])
  })
})
