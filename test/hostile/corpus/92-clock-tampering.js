// attack: freezes Date.now and performance.now, hoping the deadline is measured in program time
// expect: timeout
// timeout: 500
Date.now = () => 0
performance.now = () => 0
for (;;) {}
