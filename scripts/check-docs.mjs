// `npm run docs:check`: every public export of the package's entries (src/index.ts and the
// `mcp`, `ai` and `cordis` subpaths) has TSDoc, and so does every public
// or protected member that exported classes and interfaces declare (a member that overrides a
// documented one inherits its comment). Prints each gap as file:line and exits 1 if any.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = fileURLToPath(new URL('..', import.meta.url))
const configFile = path.join(root, 'tsconfig.docs.json')
const { config } = ts.readConfigFile(configFile, ts.sys.readFile)
const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root)
const program = ts.createProgram(parsed.fileNames, parsed.options)
const checker = program.getTypeChecker()
const entries = ['src/index.ts', 'src/mcp/index.ts', 'src/ai/index.ts', 'src/cordis.ts'].map((file) => {
  const entry = program.getSourceFile(path.join(root, file))
  if (!entry) throw new Error(`${file} is not part of tsconfig.docs.json`)
  return entry
})

const gaps = []
const documented = (symbol) => symbol.getDocumentationComment(checker).some((part) => part.text.trim() !== '')
const where = (node) => {
  const file = node.getSourceFile()
  const { line } = file.getLineAndCharacterOfPosition(node.getStart())
  return `${path.relative(root, file.fileName)}:${line + 1}`
}
const hidden = (node) =>
  ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Private || (node.name && ts.isPrivateIdentifier(node.name))

const exports = entries.flatMap((entry) => checker.getExportsOfModule(checker.getSymbolAtLocation(entry)))
for (const exported of exports) {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
  const declaration = symbol.declarations?.[0]
  if (!declaration) continue
  if (!documented(symbol)) gaps.push(`${where(declaration)}  export ${exported.name}`)
  if (!ts.isClassDeclaration(declaration) && !ts.isInterfaceDeclaration(declaration)) continue
  for (const member of declaration.members) {
    if (ts.isConstructorDeclaration(member) || ts.isIndexSignatureDeclaration(member) || hidden(member)) continue
    const memberSymbol = member.name && checker.getSymbolAtLocation(member.name)
    if (memberSymbol && !documented(memberSymbol)) gaps.push(`${where(member)}  ${exported.name}.${member.name.getText()}`)
  }
}

if (gaps.length > 0) {
  console.error(`${gaps.length} public symbol(s) lack TSDoc:\n${gaps.map((gap) => `  ${gap}`).join('\n')}`)
  process.exit(1)
}
console.log('docs: every public export is documented')
