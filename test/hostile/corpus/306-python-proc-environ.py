# attack: a Python program reads the environment block of its own process and its parent through /proc with the FFI's fs, where the host's secret would be
# expect: ok
# value: []
# known-limit[thread]: /proc/self/environ is the host's own environment block, which a worker thread shares
# timeout: 15000
import js
fs = js.process.getBuiltinModule("fs")
names = []
for pid in ["self", str(js.process.ppid)]:
    try:
        for entry in fs.readFileSync("/proc/" + pid + "/environ", "latin1").split("\0"):
            if entry.startswith("PTC_CORPUS_SECRET="):
                names.append(pid + ": " + entry)
    except Exception:
        pass
return names
