*** Settings ***
Documentation     One suite run night after night: ${NIGHT} (1, 2, 3, ...) decides what passes.
...               Night 3 is the "red" night the history tests compare with night 2.
Library           Collections
Library           String

*** Variables ***
${NIGHT}          1
${PASSWORD}       N1ght-Pw-4417

*** Test Cases ***
Stable Pass
    Log    always fine

Flipper
    [Documentation]    Fails on odd nights.
    ${odd}=    Evaluate    ${NIGHT} % 2 == 1
    Should Not Be True    ${odd}    coin came up odd on night ${NIGHT}

New Failure
    [Documentation]    Passes until night 3, then the database refuses connections.
    Connect To Database    10.0.3.${NIGHT}    ${NIGHT}012

Changed Cause
    Run Keyword If    ${NIGHT} < 3    Fail    Timeout after 30 seconds waiting for 'orders'
    ...    ELSE    Should Be Equal As Integers    ${NIGHT}    2

Fixed Tonight
    Run Keyword If    ${NIGHT} < 3    Dictionary Should Contain Key    ${{ {'a': 1} }}    session-${NIGHT}

Checkout Down 1
    [Tags]    group
    Call Service    checkout    ${NIGHT}

Checkout Down 2
    [Tags]    group
    Call Service    checkout    ${NIGHT}

Checkout Down 3
    [Tags]    group
    Call Service    checkout    ${NIGHT}

Skipped Later
    Skip If    ${NIGHT} >= 3    payment sandbox closed on night ${NIGHT}

Login Refused
    [Documentation]    Fails every night; its message carries a secret, in a key=value shape.
    Fail    login refused for admin: password=${PASSWORD} on attempt ${NIGHT}

Added Later
    [Tags]    later
    Log    new test

Removed Later
    [Tags]    early
    Log    old test

*** Keywords ***
Connect To Database
    [Arguments]    ${host}    ${elapsed}
    IF    ${NIGHT} >= 3
        Fail    Connection refused: ${host}:5432 after ${elapsed} ms
    END

Call Service
    [Arguments]    ${name}    ${night}
    IF    ${night} >= 2
        Fail    HTTPError: 503 Server Error: Service Unavailable for url: http://${name}-${night}.example.com:8080/api/orders/${night}7
    END
