# attack: a Python program reads the host's secret from process.env through the FFI, and from its own os.environ
# expect: ok
# value: [null, null]
# timeout: 15000
import js, os
return [getattr(js.process.env, "PTC_CORPUS_SECRET", None), os.environ.get("PTC_CORPUS_SECRET")]
