# attack: a Python program ends its process through the FFI: js.process.exit with a non-zero code
# expect: worker-exit
# message: exit code 7
# timeout: 15000
import js
js.process.exit(7)
