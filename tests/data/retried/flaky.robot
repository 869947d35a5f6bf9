*** Variables ***
${ATTEMPT}    ${0}

*** Test Cases ***
Passes On Its Second Attempt
    ${n} =    Evaluate    ${ATTEMPT} + 1
    Set Suite Variable    ${ATTEMPT}    ${n}
    Should Be True    ${n} > 1    attempt ${n} failed

Steady
    Log    steady
