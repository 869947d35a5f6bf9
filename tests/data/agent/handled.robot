*** Test Cases ***
Handler Fails
    TRY
        Should Be Equal    expected    actual
    EXCEPT    expected != actual    AS    ${error}
        Log    recovering from ${error}
        Fail    recovery failed: ${error}
    END

Nothing Matched
    TRY
        Should Be Equal    left    right
    EXCEPT    something else
        Log    never
    END

Cleanup Fails
    TRY
        Should Be Equal    one    two
    EXCEPT    one != two
        Log    handled
    FINALLY
        Should Be True    ${False}    cleanup check failed
    END
