*** Settings ***
Library           ShopApi.py

*** Test Cases ***
Alice Can Log In
    ${status} =    Post Login    alice    ${{'s3cr3t'}}
    Should Be Equal As Integers    ${status}    200

Bob Gets A Server Error
    [Documentation]    The login endpoint answers 503 for bob on staging.
    ${status} =    Post Login    bob    hunter2
    Should Be Equal As Integers    ${status}    200    Login failed with HTTP ${status}

Locked Account Is Reported
    ${status} =    Post Login    locked    x
    Should Be Equal As Integers    ${status}    423
