# attack: a Python program starts a detached child process through the FFI and returns while it runs
# expect: ok
# value: "started"
# timeout: 15000
import js
from pyodide.ffi import to_js
child_process = js.process.getBuiltinModule("child_process")
child = child_process.spawn("sleep", to_js(["__SLEEP__"]), to_js({"detached": True, "stdio": "ignore"}, dict_converter=js.Object.fromEntries))
child.unref()
return "started"
