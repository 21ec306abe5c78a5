# attack: a Python program builds Node's require through the FFI (module.createRequire, as there is no global require) and reads the host's working directory with it
# expect: ok
# known-limit[thread]: a worker thread reads whatever the host user can
# value: []
# timeout: 15000
import js
try:
    js.require("fs")
    raise RuntimeError("a global require was reachable")
except AttributeError:
    pass
require = js.process.getBuiltinModule("module").createRequire("/")
fs = require("fs")
return [entry for entry in [".env", ".git", "src", "test", "README.md", "package-lock.json"] if fs.existsSync("__HOST_CWD__/" + entry)]
