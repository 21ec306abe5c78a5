# attack: a Python loop that never ends and catches everything, so no exception can stop it
# expect: timeout
# timeout: 1000
while True:
    try:
        while True:
            pass
    except BaseException:
        pass
