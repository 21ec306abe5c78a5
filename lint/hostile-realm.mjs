/**
 * The hostile-realm rule, as an ESLint plugin. Code in `src/worker`, `src/json` and a few files
 * of `src/transform` (REALM_FILES in eslint.config.mjs) runs in the same JavaScript realm as the
 * programs it serves (or validates what they produced), and a program may replace any global or
 * any built-in method: `globalThis.Object`, `Array.prototype.map`,
 * `Array.prototype[Symbol.iterator]`, `Promise.prototype.then`, `require('node:path').resolve`.
 * Such code must therefore capture every built-in it needs while its module loads, before any
 * program runs, and afterwards call only what it captured. This rule reports, inside functions and class fields (code that runs
 * later), what would reach a replaced built-in:
 *
 * - a reference to a global variable other than `undefined`, `NaN` and `Infinity` (which no
 *   program can replace);
 * - a call (or `new`) of a member declared in a type declaration file (the ECMAScript library or
 *   Node's types): `list.map(f)`, `text.slice(1)`, `fn.call(x)`, `Object.keys(o)`,
 *   `new vm.Script(code)`.
 *
 * `for…of`, array and argument spread and array destructuring (all of which use the array
 * iterator) are reported by `no-restricted-syntax` in the config, at any depth.
 */
/** Globals defined non-writable and non-configurable by ECMAScript: nothing can replace them. */
const FIXED_GLOBALS = new Set(['undefined', 'NaN', 'Infinity'])

const FUNCTION_TYPES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression'])

/** Whether `node` runs after module load: inside a function or an instance field initializer. */
function runsLater(node) {
  for (let at = node.parent; at; at = at.parent) {
    if (FUNCTION_TYPES.has(at.type)) return true
    if ((at.type === 'PropertyDefinition' || at.type === 'AccessorProperty') && !at.static) return true
  }
  return false
}

const capturedBuiltins = {
  meta: {
    type: 'problem',
    docs: { description: 'Call only built-ins captured at module load in code that runs in the program\'s realm' },
    schema: [],
    messages: {
      global:
        "'{{name}}' is looked up on the global object when this code runs, and a program may have replaced it: capture it in a module-level constant.",
      method:
        "'.{{name}}' is looked up on a built-in object or prototype when this code runs, and a program may have replaced it: call one captured at module load (see src/intrinsics.ts).",
    },
  },
  create(context) {
    // Type information from typescript-eslint's parser (the config turns on its project service).
    const services = context.sourceCode.parserServices
    const program = services?.program
    if (!program) throw new Error('hostile-realm/captured-builtins needs type information: parserOptions.projectService')
    const checker = program.getTypeChecker()

    /** The method is declared only in declaration files: the standard library or Node's types. */
    function isBuiltinMethod(member) {
      const tsNode = services.esTreeNodeToTSNodeMap.get(member)
      const name = tsNode.name ?? tsNode.argumentExpression
      const symbol = name && checker.getSymbolAtLocation(name)
      const declarations = symbol?.declarations
      if (!declarations || declarations.length === 0) return false
      return declarations.every((declaration) => declaration.getSourceFile().isDeclarationFile)
    }

    function checkCallee(node) {
      const callee = node.callee
      if (callee.type !== 'MemberExpression' || !runsLater(node)) return
      if (!isBuiltinMethod(callee)) return
      const name = callee.computed ? context.sourceCode.getText(callee.property) : callee.property.name
      context.report({ node: callee, messageId: 'method', data: { name } })
    }

    return {
      CallExpression: checkCallee,
      NewExpression: checkCallee,
      'Program:exit'(node) {
        const globalScope = context.sourceCode.getScope(node)
        const references = [...globalScope.through]
        for (const variable of globalScope.variables) {
          if (variable.defs.length === 0) references.push(...variable.references)
        }
        for (const reference of references) {
          const name = reference.identifier.name
          if (!reference.isValueReference || FIXED_GLOBALS.has(name)) continue
          if (!runsLater(reference.identifier)) continue
          context.report({ node: reference.identifier, messageId: 'global', data: { name } })
        }
      },
    }
  },
}

export default { rules: { 'captured-builtins': capturedBuiltins } }
