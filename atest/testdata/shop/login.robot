*** Settings ***
Library           HttpLike.py

*** Variables ***
${PASSWORD}       Tr0ub4dor&3

*** Test Cases ***
Alice Logs In
    Login As    alice    ${PASSWORD}

Bob Gets A Server Error
    [Documentation]    The login endpoint answers 503 for bob on staging.
    Login As    bob    ${PASSWORD}

*** Keywords ***
Login As
    [Arguments]    ${user}    ${password}
    Post    /login    ${user}    ${password}
    Status Should Be    200
