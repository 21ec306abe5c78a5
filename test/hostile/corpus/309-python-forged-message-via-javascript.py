# attack: a Python program runs JavaScript through pyodide.code.run_js, reaches the worker's own channel with it and forges a message that is not an object
# expect: protocol
# prelude: hijack
# timeout: 15000
from pyodide.code import run_js
await run_js("(async () => {\n" + PRELUDE + "\nforge(42)\nawait hang()\n})()")
