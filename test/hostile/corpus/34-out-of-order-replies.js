// attack: replies arrive in the reverse order of the calls; each must settle its own call
// expect: ok
// value: [120, 1, 60, 30]
/* completion */ await Promise.all([tools.delay(120), tools.delay(1), tools.delay(60), tools.delay(30)])
