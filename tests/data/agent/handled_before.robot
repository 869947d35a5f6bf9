*** Test Cases ***
Status Then Assert
    Log    opening the login page
    ${ok} =    Run Keyword And Return Status    Should Be Equal    login-page    error-page
    Log    continuing
    Should Be True    ${ok}

Ignore Error Then Assert
    ${status}    ${message} =    Run Keyword And Ignore Error    Check Backend
    Should Be Equal    ${status}    PASS

Inside A Keyword
    Wait For Checkout

Many Handled
    Run Keyword And Expect Error    *expected*    Fail    an expected failure
    TRY
        Fail    first attempt refused
    EXCEPT    first attempt*    type=glob
        Log    retrying
    END
    FOR    ${i}    IN RANGE    4
        Run Keyword And Ignore Error    Fail    probe ${i} refused
    END
    Run Keyword And Ignore Error    Fail    last probe refused
    Run Keyword And Ignore Error    Fail    final probe refused
    Fail    gave up

Handler Fails Too
    TRY
        Fail    Payment declined for visa
    EXCEPT    Payment declined*    type=glob    AS    ${error}
        Fail    Payment declined for mastercard
    END

Not Caught
    TRY
        Fail    disk full
    EXCEPT    network*    type=glob
        Log    not this one
    FINALLY
        Fail    cleanup failed
    END

*** Keywords ***
Check Backend
    Fail    backend returned 503 Service Unavailable

Wait For Checkout
    ${ready} =    Run Keyword And Return Status    Element Ready    checkout
    Should Be True    ${ready}    checkout never became ready

Element Ready
    [Arguments]    ${name}
    Fail    ${name} still hidden behind the cookie banner
