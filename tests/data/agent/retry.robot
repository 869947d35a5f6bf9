*** Variables ***
${ATTEMPT}    ${0}

*** Test Cases ***
Waits For The Service
    Wait Until Keyword Succeeds    4x    1ms    Service Should Answer

*** Keywords ***
Service Should Answer
    ${n} =    Evaluate    ${ATTEMPT} + 1
    Set Test Variable    ${ATTEMPT}    ${n}
    Fail    no answer on attempt ${n}
