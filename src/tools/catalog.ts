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
/**
 * Bounds on what a program may ask, checked before the host spends on it: a query is a few
 * words (scoring costs words × tools), and a name no longer than the longest tool name or this
 * floor (the typo search costs its length × each name's).
 */
export const MAX_QUERY_CHARACTERS = 1000
export const MAX_QUERY_WORDS = 32
export const MAX_NAME_CHARACTERS = 256

/** Its declaration, for the model. */
export const CATALOG_DECLARATION = `/** Finds tools by what they do. Exists only inside a program: call it from your code, never as a tool. */
declare const ${CATALOG_GLOBAL}: {
  /** The tools that best match \`query\` (words, not code), best first; \`limit\` defaults to ${DEFAULT_SEARCH_LIMIT}, at most ${MAX_SEARCH_LIMIT}. */
  search(query: string, options?: { limit?: number }): Promise<Array<{ name: string; description: string; declaration: string }>>
  /** The TypeScript declaration of one tool, by its full name (\`group.tool\`). */
  describe(name: string): Promise<string>
}`

/** Edits a suggested name may be from the name asked: farther, it is no typo's meaning. */
const MAX_SUGGESTION_DISTANCE = 4

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
  /**
   * Term → the tools holding it and the term's BM25 score in each. A term's score in a tool
   * depends only on the catalog, so it is computed once here, and a query only adds up the
   * postings of its own words.
   */
  private readonly _postings = new Map<string, { tools: Uint32Array; scores: Float64Array }>()
  private _longestName = 0

  constructor(groups: readonly ToolGroup[]) {
    const documents: Array<{ terms: Map<string, number>; length: number }> = []
    let total = 0
    for (const group of groups) {
      for (const member of group.tools) {
        const nameTokens = tokenize(member.name)
        const tokens = [...tokenize(member.description), ...tokenize(member.parameters)]
        for (let copy = 0; copy < NAME_WEIGHT; copy++) tokens.push(...nameTokens)
        const terms = new Map<string, number>()
        for (const token of tokens) terms.set(token, (terms.get(token) ?? 0) + 1)
        documents.push({ terms, length: tokens.length })
        this._members.push(member)
        this._byName.set(member.name, member)
        this._longestName = Math.max(this._longestName, member.name.length)
        total += tokens.length
      }
    }
    const averageLength = documents.length === 0 ? 0 : total / documents.length
    const holders = new Map<string, number[]>()
    documents.forEach((document, index) => {
      for (const term of document.terms.keys()) {
        const list = holders.get(term)
        if (list) list.push(index)
        else holders.set(term, [index])
      }
    })
    for (const [term, tools] of holders) {
      const idf = Math.log(1 + (documents.length - tools.length + 0.5) / (tools.length + 0.5))
      const scores = new Float64Array(tools.length)
      tools.forEach((index, at) => {
        const { terms, length } = documents[index]!
        const frequency = terms.get(term)!
        scores[at] = (idf * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * length) / averageLength))
      })
      this._postings.set(term, { tools: Uint32Array.from(tools), scores })
    }
  }

  /** How many tools it holds. */
  get size(): number {
    return this._members.length
  }

  /** The best `limit` tools for `query`, best first; ties keep the groups' order. */
  search(query: string, limit: number): ToolGroupMember[] {
    const scores = new Float64Array(this._members.length)
    for (const term of new Set(tokenize(query))) {
      const posting = this._postings.get(term)
      if (posting === undefined) continue
      for (let at = 0; at < posting.tools.length; at++) scores[posting.tools[at]!]! += posting.scores[at]!
    }
    // The best `limit` in one pass, kept sorted: `limit` is small, the catalog may not be.
    const best: number[] = []
    for (let index = 0; index < scores.length; index++) {
      const score = scores[index]!
      if (score <= 0 || (best.length === limit && score <= scores[best[limit - 1]!]!)) continue
      let at = best.length
      while (at > 0 && scores[best[at - 1]!]! < score) at--
      best.splice(at, 0, index)
      if (best.length > limit) best.pop()
    }
    return best.map((index) => this._members[index]!)
  }

  /**
   * The `count` names nearest `name` by edit distance (a typo's likely meaning), none farther
   * than `MAX_SUGGESTION_DISTANCE` edits or half the name's length. A name whose
   * length alone puts it farther than the current `count`th best is never compared, and each
   * comparison stops once a row exceeds that bound, so a long or random name costs little.
   */
  closest(name: string, count: number): string[] {
    const best: Array<{ index: number; distance: number }> = []
    const farthest = Math.min(MAX_SUGGESTION_DISTANCE, Math.ceil(name.length / 2)) + 1
    for (let index = 0; index < this._members.length; index++) {
      const bound = best.length < count ? farthest : best[count - 1]!.distance
      const candidate = this._members[index]!.name
      if (Math.abs(candidate.length - name.length) >= bound) continue
      const distance = editDistance(name, candidate, bound)
      if (distance >= bound) continue
      let at = best.length
      while (at > 0 && best[at - 1]!.distance > distance) at--
      best.splice(at, 0, { index, distance })
      if (best.length > count) best.pop()
    }
    return best.map((entry) => this._members[entry.index]!.name)
  }

  /** The length of the longest tool name. */
  get longestName(): number {
    return this._longestName
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
        const hint = 'say in a few words what the tool does'
        if (query.length > MAX_QUERY_CHARACTERS) throw new PtcCallRefusal(`catalog.search: the query has ${query.length} characters, over the limit of ${MAX_QUERY_CHARACTERS}; ${hint}`)
        const words = new Set(tokenize(query)).size
        if (words > MAX_QUERY_WORDS) throw new PtcCallRefusal(`catalog.search: the query has ${words} distinct words, over the limit of ${MAX_QUERY_WORDS}; ${hint}`)
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
        const longest = Math.max(MAX_NAME_CHARACTERS, catalog.longestName)
        if (name.length > longest) throw new PtcCallRefusal(`catalog.describe: the name has ${name.length} characters, over the limit of ${longest} (no tool name is longer)`)
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

/**
 * Levenshtein distance, or `bound` once it is sure to be at least that. Two cheap lower bounds
 * come first (the lengths' difference; the characters one string has that the other lacks),
 * then the table one row at a time, only the band of cells within `bound` of its diagonal, and
 * stops when a whole row reaches `bound` (the distance can only grow from there).
 */
function editDistance(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) >= bound) return bound
  if (missingCharacters(a, b) >= bound) return bound
  const width = b.length + 1
  if (rows[0].length < width) rows = [new Uint32Array(width), new Uint32Array(width)]
  let [row, next] = rows
  for (let j = 0; j < width; j++) row[j] = j
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - bound)
    const to = Math.min(b.length, i + bound)
    // Cells outside the band count as `bound`: their true value is at least that.
    next[from - 1] = from === 1 ? i : bound
    let smallest = next[from - 1]!
    for (let j = from; j <= to; j++) {
      const value = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1))
      next[j] = value
      if (value < smallest) smallest = value
    }
    if (to < b.length) next[to + 1] = bound
    if (smallest >= bound) return bound
    const previous = row
    row = next
    next = previous
  }
  return Math.min(row[b.length]!, bound)
}

// Scratch space of the two functions above and below, reused: the host's thread runs one at a time.
let rows = [new Uint32Array(64), new Uint32Array(64)] as const
const counts = new Int32Array(256)

/**
 * A lower bound of the edit distance: how many characters of the longer string the shorter one
 * lacks, counted by character code modulo 256 (a shared bucket only lowers the count).
 */
function missingCharacters(a: string, b: string): number {
  for (let i = 0; i < a.length; i++) counts[a.charCodeAt(i) & 255]!++
  let unmatched = 0
  for (let j = 0; j < b.length; j++) {
    const bucket = b.charCodeAt(j) & 255
    if (counts[bucket]! > 0) counts[bucket]!--
    else unmatched++
  }
  for (let i = 0; i < a.length; i++) counts[a.charCodeAt(i) & 255] = 0
  // What b has that a lacks is `unmatched`; what a has that b lacks follows from the lengths.
  return Math.max(unmatched, a.length - (b.length - unmatched))
}
