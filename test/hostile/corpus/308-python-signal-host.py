# attack: a Python program signals the hosting process, its parent and their groups through the FFI; each must be refused
# expect: ok
# value: 5
# timeout: 15000
import js
attempts = [
    lambda: js.process.kill(js.process.pid, "SIGKILL"),
    lambda: js.process.kill(0, "SIGTERM"),
    lambda: js.process.kill(-1, "SIGKILL"),
    lambda: js.process.kill(js.process.ppid, "SIGTERM"),
    lambda: js.process.kill(js.process.pid, "SIGSTOP"),
]
refused = 0
for attempt in attempts:
    try:
        attempt()
    except Exception:
        refused += 1
return refused
