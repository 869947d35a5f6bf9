*** Test Cases ***
Polls The Queue
    FOR    ${n}    IN RANGE    30
        Log    queue depth ${n}: timeout waiting for consumer    WARN
    END
    Fail    consumer never answered (timeout)
