/**
 * In-program tool discovery: the runtime-owned global `catalog`, whose `search` and `describe`
 * are served by the host from the groups' names, descriptions and schemas. No tool is called.
 *
 * Ranking is Okapi BM25 over one document per tool: its name (split at dots, underscores,
 * dashes and camelCase humps, and counted three times, since a name is the densest evidence),
 * its group's global, its description and its parameters' names and descriptions. It is ours,
 * about sixty lines, rather than a search library: the corpus is a few thousand short documents
 * built once, what matters is tokenizing identifiers (`createIssue`, `list_pull_requests`),
 * which general text-search libraries leave to the caller anyway, and the runtime gains no
 * dependency for it.
 */
import { PtcCallRefusal } from '../seam/refusal.js'
import type { PtcBindingNamespace, PtcJsonValue } from '../seam/types.js'
import type { ToolGroup, ToolGroupMember } from './group.js'

/** The program-visible global of discovery. */
export const CATALOG_GLOBAL = 'catalog'
/** Results of one search unless the program asks for another number, and at most. */
export const DEFAULT_SEARCH_LIMIT = 10
export const MAX_SEARCH_LIMIT = 50

/** Its declaration, for the model. */
export const CATALOG_DECLARATION = `/** Finds tools by what they do. Exists only inside a program: call it from your code, never as a tool. */
declare const ${CATALOG_GLOBAL}: {
  /** The tools that best match \`query\` (words, not code), best first; \`limit\` defaults to ${DEFAULT_SEARCH_LIMIT}, at most ${MAX_SEARCH_LIMIT}. */
  search(query: string, options?: { limit?: number }): Promise<Array<{ name: string; description: string; declaration: string }>>
  /** The TypeScript declaration of one tool, by its full name (\`group.tool\`). */
  describe(name: string): Promise<string>
}`

// BM25's usual constants: term-frequency saturation and length normalization.
const K1 = 1.2
const B = 0.75
const NAME_WEIGHT = 3

/** Lower-case words of `text`: identifiers split at their humps and separators, plurals folded. */
export function tokenize(text: string): string[] {
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
  const tokens: string[] = []
  for (const word of words) if (word !== '') tokens.push(stem(word))
  return tokens
}

/** A light plural fold, so `issues` finds `issue` and `repositories` finds `repository`. */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1)
  return word
}

/** A BM25 index over the tools of some groups, built once. */
export class ToolCatalog {
  private readonly _members: ToolGroupMember[] = []
  private readonly _byName = new Map<string, ToolGroupMember>()
  /** Per document: term → frequency, and its length in tokens. */
  private readonly _documents: Array<{ terms: Map<string, number>; length: number }> = []
  /** Term → number of documents holding it. */
  private readonly _documentFrequency = new Map<string, number>()
  private readonly _averageLength: number

  constructor(groups: readonly ToolGroup[]) {
    let total = 0
    for (const group of groups) {
      for (const member of group.tools) {
        const nameTokens = tokenize(member.name)
        const tokens = [...tokenize(member.description), ...tokenize(member.parameters)]
        for (let copy = 0; copy < NAME_WEIGHT; copy++) tokens.push(...nameTokens)
        const terms = new Map<string, number>()
        for (const token of tokens) terms.set(token, (terms.get(token) ?? 0) + 1)
        for (const term of terms.keys()) this._documentFrequency.set(term, (this._documentFrequency.get(term) ?? 0) + 1)
        this._documents.push({ terms, length: tokens.length })
        this._members.push(member)
        this._byName.set(member.name, member)
        total += tokens.length
      }
    }
    this._averageLength = this._members.length === 0 ? 0 : total / this._members.length
  }

  /** How many tools it holds. */
  get size(): number {
    return this._members.length
  }

  /** The best `limit` tools for `query`, best first; ties keep the groups' order. */
  search(query: string, limit: number): ToolGroupMember[] {
    const terms = [...new Set(tokenize(query))]
    const count = this._members.length
    const scored: Array<{ index: number; score: number }> = []
    for (let index = 0; index < count; index++) {
      const document = this._documents[index]!
      let score = 0
      for (const term of terms) {
        const frequency = document.terms.get(term)
        if (frequency === undefined) continue
        const holding = this._documentFrequency.get(term)!
        const idf = Math.log(1 + (count - holding + 0.5) / (holding + 0.5))
        score += (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * document.length) / this._averageLength))
      }
      if (score > 0) scored.push({ index, score })
    }
    scored.sort((a, b) => b.score - a.score || a.index - b.index)
    return scored.slice(0, limit).map(({ index }) => this._members[index]!)
  }

  /** The `count` names nearest `name` by edit distance (a typo's likely meaning). */
  closest(name: string, count: number): string[] {
    const scored = this._members.map((member, index) => ({ name: member.name, index, distance: editDistance(name, member.name) }))
    scored.sort((a, b) => a.distance - b.distance || a.index - b.index)
    return scored.slice(0, count).map((entry) => entry.name)
  }

  /** The tool named `name` (`group.tool`), if there is one. */
  get(name: string): ToolGroupMember | undefined {
    return this._byName.get(name)
  }
}

/**
 * The binding namespace of `catalog`: `search(query, { limit })` and `describe(name)`, both
 * answered from `catalog`, each refusal naming the rule.
 */
export function catalogNamespace(catalog: ToolCatalog): PtcBindingNamespace {
  return {
    global: CATALOG_GLOBAL,
    positional: true,
    functions: {
      search: async (args) => {
        const [query, options] = args as [unknown, unknown]
        if (typeof query !== 'string' || query.trim() === '') throw new PtcCallRefusal('catalog.search: the query must be a non-empty string of words')
        let limit = DEFAULT_SEARCH_LIMIT
        if (options !== undefined) {
          const asked = typeof options === 'object' && options !== null ? (options as { limit?: unknown }).limit : options
          if (asked !== undefined && !(Number.isSafeInteger(asked) && (asked as number) >= 1 && (asked as number) <= MAX_SEARCH_LIMIT)) {
            throw new PtcCallRefusal(`catalog.search: limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}, got ${JSON.stringify(asked)}`)
          }
          limit = (asked as number | undefined) ?? limit
        }
        return catalog.search(query, limit).map((member): PtcJsonValue => ({ name: member.name, description: member.description, declaration: member.declaration }))
      },
      describe: async (args) => {
        const [name] = args as [unknown]
        if (typeof name !== 'string') throw new PtcCallRefusal('catalog.describe: the name must be a string such as "group.tool"')
        const member = catalog.get(name)
        if (member === undefined) {
          const near = catalog.closest(name, 3)
          throw new PtcCallRefusal(`catalog.describe: no tool is named ${JSON.stringify(name)}${near.length > 0 ? `; close: ${near.join(', ')}` : ''}`)
        }
        return member.declaration
      },
    },
  }
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]!
}
