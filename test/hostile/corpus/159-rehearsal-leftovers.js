// attack: looks for what the warm-up rehearsal left in the environment's globals
// expect: ok
// value: ["undefined", "undefined", "undefined"]
/* completion */ [typeof rehearsal, typeof echoed, typeof both]
